"""The job pages and their JSON API, as a Flask app over a job store.

``/`` lists the jobs, ``/jobs/<id>`` shows one (spec, state history, live log tails of every rank,
metric curves drawn by the vendored uPlot, another job overlaid with ``?compare=<id>``, and for a
failed job the verdict of ``ascendify explain``: the rank that went wrong first, why, the fix).
The pages fetch everything they show from the API (``/api/jobs``, ``/api/jobs/<id>``,
``/api/jobs/<id>/metrics``, ``/resources``, ``/logs``). Only requests whose ``Host`` is one the
server serves (``app.config[SERVED_HOSTS]``, set once it is bound) are answered. Read-only unless
the app is made with ``allow_actions``: then ``POST /api/jobs/<id>/stop`` and ``/rerun`` work
for requests that carry the token and come from the page's own origin (see :func:`_may_act`).
Secret-shaped values are never shown.
"""

from __future__ import annotations

import hmac
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, Response, abort, jsonify, render_template, request
from flask.typing import ResponseReturnValue
from werkzeug.exceptions import HTTPException

from ascendify.errors import AscendifyError
from ascendify.jobs import service
from ascendify.jobs.cause import job_cause
from ascendify.jobs.layout import JobLayout
from ascendify.jobs.metrics import SeriesReader, job_progress
from ascendify.jobs.report import membership_change
from ascendify.jobs.spec import shown_spec
from ascendify.jobs.store import ACTIVE, FINAL, JobRecord, JobStore
from ascendify.moments import iso_time
from ascendify.terminal_text import printable, printable_data
from ascendify.web.perf import add_perf_routes

LIST_LIMIT = 500
LOG_TAIL_BYTES = 16 << 10  # what a log view starts with
LOG_CHUNK_BYTES = 256 << 10  # at most this much new log per request
# Points of a series the metrics API gives (?points=N): a chart is some 1,000 pixels wide, and
# the lowest and highest of each run of points are kept. `job metrics` gives every point.
CHART_POINTS = 4000
MIN_POINTS, MAX_POINTS = 4, 100_000
CACHED_JOBS = (
    8  # series files kept between requests (a page's metrics and resources, a compared job's)
)
TOKEN_HEADER = "X-Ascendify-Token"  # a custom header: a cross-site form cannot send it
SERVED_HOSTS = "ASCENDIFY_SERVED_HOSTS"  # app.config key: the Host values answered


def create_app(store: JobStore, *, allow_actions: bool = False, token: str | None = None) -> Flask:
    """The pages of ``store``; with ``allow_actions``, stop and rerun for requests holding
    ``token``. No request is answered until ``app.config[SERVED_HOSTS]`` names its Host."""
    if allow_actions and not token:
        raise ValueError("actions need a token")
    app = Flask(__name__)
    app.json.sort_keys = False  # type: ignore[attr-defined]
    page_token = _guard(app, token)
    series_of = _SeriesCache()

    def job_or_404(job_id: str) -> JobRecord:
        try:
            return store.get(job_id)
        except AscendifyError:
            abort(404, description=f"no job {job_id}")

    @app.get("/")
    def index() -> ResponseReturnValue:
        return render_template(
            "index.html", allow_actions=allow_actions, token=page_token(), states=ACTIVE + FINAL
        )

    @app.get("/jobs/<job_id>")
    def job_page(job_id: str) -> ResponseReturnValue:
        job = job_or_404(job_id)
        return render_template(
            "job.html",
            job=job,
            allow_actions=allow_actions,
            token=page_token(),
            compare=request.args.get("compare"),
        )

    @app.get("/api/jobs")
    def api_jobs() -> ResponseReturnValue:
        service.reconcile(store)
        return _job_list(store)

    @app.get("/api/jobs/<job_id>")
    def api_job(job_id: str) -> ResponseReturnValue:
        job = job_or_404(job_id)
        return jsonify(details(store, job))

    @app.get("/api/jobs/<job_id>/metrics")
    def api_metrics(job_id: str) -> ResponseReturnValue:
        job = job_or_404(job_id)
        layout = JobLayout(store.job_dir(job.id), job.id)
        found = series_of(
            layout.metrics,
            request.args.get("name"),
            request.args.get("rank", type=int),
            request.args.get("times") == "1",
            _points(),
            restarts=[attempt["start"] for attempt in layout.attempts(job.nodes)[1:]],
        )
        return jsonify({"job": job.id, "series": found})

    @app.get("/api/jobs/<job_id>/resources")
    def api_resources(job_id: str) -> ResponseReturnValue:
        job = job_or_404(job_id)
        path = JobLayout(store.job_dir(job.id), job.id).resources
        return jsonify({"job": job.id, "series": series_of(path, None, None, True, _points())})

    @app.get("/api/jobs/<job_id>/logs")
    def api_logs(job_id: str) -> ResponseReturnValue:
        job = job_or_404(job_id)
        rank = request.args.get("rank", default=0, type=int)
        try:
            (path,) = service.log_files(store, job, None, rank)
        except AscendifyError as error:
            abort(404, description=str(error))
        offset = request.args.get("offset", type=int)
        if offset is not None and offset < 0:
            abort(400, description=f"offset {offset}: a byte offset is 0 or more")
        return jsonify({"rank": rank, **log_tail(path, offset), "active": job.active})

    @app.post("/api/jobs/<job_id>/<action>")
    def api_action(job_id: str, action: str) -> ResponseReturnValue:
        if not allow_actions:
            abort(403, description="read-only: start the page with --allow-actions")
        if not _may_act(token):
            abort(
                403,
                description="actions are taken from the job page opened with the URL "
                "`ascendify job ui` printed (its token) only",
            )
        job = job_or_404(job_id)
        if action == "stop":
            # stop waits for the job to end: not in the request.
            threading.Thread(target=service.stop, args=(store, job.id), daemon=True).start()
            return jsonify({"job": job.id, "stopping": True}), 202
        if action == "rerun":
            return jsonify({"job": service.rerun(store, job.id).id, "rerun_of": job.id}), 201
        abort(404, description=f"no action {action}")

    @app.errorhandler(AscendifyError)
    def refused(error: AscendifyError) -> ResponseReturnValue:
        return jsonify({"error": str(error)}), 400

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> ResponseReturnValue:
        if not request.path.startswith("/api/"):
            return error
        return jsonify({"error": error.description}), error.code or 500

    return add_perf_routes(app, store)


def _job_list(store: JobStore) -> Response:
    """The jobs of the request's ``state`` whose name holds ``q`` (or whose id starts with it),
    ``limit`` of them from ``offset``; the header ``X-Total-Count`` says how many there are."""
    state, text = request.args.get("state"), (request.args.get("q") or "").lower()
    offset = request.args.get("offset", default=0, type=int)
    limit = request.args.get("limit", default=LIST_LIMIT, type=int)
    if offset < 0 or not 1 <= limit <= LIST_LIMIT:
        abort(400, description=f"offset 0 or more, limit from 1 to {LIST_LIMIT}")
    found = [
        job
        for job in store.jobs(None if not state else (state,))
        if not text or text in job.name.lower() or job.id.startswith(text)
    ]
    response = jsonify([summary(store, job) for job in found[offset : offset + limit]])
    response.headers["X-Total-Count"] = str(len(found))
    return response


def _points() -> int:
    """The request's ``points``: at most this many a series (see :meth:`Series.downsampled`)."""
    limit = request.args.get("points", default=CHART_POINTS, type=int)
    if not MIN_POINTS <= limit <= MAX_POINTS:
        abort(400, description=f"points {limit}: from {MIN_POINTS} to {MAX_POINTS} a series")
    return limit


class _SeriesCache:
    """The series of the jobs whose curves are shown, read on from the last request (the
    :class:`SeriesReader` of a few jobs is kept)."""

    def __init__(self) -> None:
        self._readers: OrderedDict[Path, SeriesReader] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(
        self,
        path: Path,
        name: str | None,
        rank: int | None,
        times: bool,
        limit: int,
        *,
        restarts: list[float] | None = None,
    ) -> list[dict[str, object]]:
        """The series of ``name`` and ``rank`` (all when None) as the API gives them; with
        ``restarts``, cut by attempt (see :meth:`Series.to_json`)."""
        with self._lock:  # the reader's lists grow in place: read and shown by one request
            reader = self._readers.pop(path, None) or SeriesReader(path)
            self._readers[path] = reader
            while len(self._readers) > CACHED_JOBS:
                self._readers.popitem(last=False)
            return [
                one.to_json(times, limit, restarts)
                for one in reader.read()
                if (name is None or one.name == name) and (rank is None or one.rank == rank)
            ]


def _guard(app: Flask, token: str | None) -> Callable[[], str | None]:
    """Refuse every request not addressed to a served Host; keep the token of a page opened
    with it in a cookie. Returns what gives a page its token (None: opened without)."""
    app.config[SERVED_HOSTS] = frozenset()

    def cookie() -> str:
        # One per port: the cookies of a host are shared by all its ports.
        return f"ascendify-token-{request.environ.get('SERVER_PORT', '')}"

    @app.before_request
    def addressed_here() -> None:
        """A page of another site whose name was made to resolve here (DNS rebinding) sends its
        own name as Host: it is refused before anything is read."""
        if request.host.lower() not in app.config[SERVED_HOSTS]:
            # Not naming the served ones: a rebinding page would read this machine's names.
            abort(403, description="not a host this server serves: open the URL job ui printed")

    def page_token() -> str | None:
        """The token, for a page opened with it (in the URL, or its cookie since then)."""
        given = request.args.get("token") or request.cookies.get(cookie())
        return token if token and given and hmac.compare_digest(given, token) else None

    @app.after_request
    def remember_token(response: Response) -> Response:
        given = request.args.get("token")
        if token and given and hmac.compare_digest(given, token):
            response.set_cookie(cookie(), token, httponly=True, samesite="Strict")
        return response

    return page_token


def _may_act(token: str | None) -> bool:
    """A POST acts only with the token in its header, from the page's own origin.

    The Host was checked already (``addressed_here``); the token is in the pages served to
    those who opened the printed URL, which another site cannot read. The custom header cannot
    be set by a cross-site form, and a cross-site ``fetch`` with it needs a CORS preflight this
    server never answers; the Origin (or Referer) check is a last lock.
    """
    given = request.headers.get(TOKEN_HEADER)
    if not (token and given and hmac.compare_digest(given, token)):
        return False
    origin = request.headers.get("Origin") or request.headers.get("Referer")
    return origin is not None and urlsplit(origin).netloc == request.host


def summary(store: JobStore, job: JobRecord) -> dict[str, Any]:
    """One job as the list shows it: state, attempts, progress, duration."""
    progress = job_progress(JobLayout(store.job_dir(job.id), job.id).metrics)
    end = job.ended or time.time()
    return {
        "id": job.id,
        "name": job.name,
        "engine": job.engine,
        "flavor": job.spec.get("flavor"),
        "nodes": job.nodes,
        "cards": job.cards,
        "state": job.state,
        "cause": None if job.cause is None else printable(job.cause),
        "exit_code": job.exit_code,
        "attempts": job.attempts,
        "created": job.created,
        "started": job.started,
        "ended": job.ended,
        # The same moments as every view shows them (the numbers stay for clients that compute).
        "created_iso": iso(job.created),
        "started_iso": iso(job.started),
        "ended_iso": iso(job.ended),
        "duration": None if job.started is None else end - job.started,
        "rerun_of": job.rerun_of,
        "progress": {
            "step": progress.step,
            "loss": progress.loss,
            "throughput": None if progress.throughput is None else list(progress.throughput),
        },
    }


def details(store: JobStore, job: JobRecord) -> dict[str, Any]:
    """One job as its page shows it: the list's fields, the spec, the state history, the ranks,
    and for a failed job why it failed (``verdict``: ``ascendify explain``'s on its logs)."""
    layout = JobLayout(store.job_dir(job.id), job.id)
    return {
        **summary(store, job),
        # What was read from logs is served with its control characters made visible (a cause
        # kept before they were is made so here).
        "verdict": printable_data(job_cause(job, layout).get("verdict")),
        "spec": shown_spec(job.spec),
        "events": [
            {"time": e.time, "time_iso": iso(e.time), "state": e.state, "detail": e.detail}
            for e in store.events(job.id)
        ],
        "workers": [
            {"node": n.node, "address": n.address, "exit_code": n.exit_code}
            for n in store.nodes(job.id)
        ],
        "ranks": job.nodes * job.cards,
        # Each attempt: start, end, state, cause, reason, exit code and hang stack of each rank,
        # and the nodes that left or joined when it began.
        "attempts_detail": printable_data(
            [
                {
                    **attempt,
                    "start_iso": iso(attempt["start"]),
                    "end_iso": iso(attempt["end"]),
                    "membership_change": membership_change(attempt),
                }
                for attempt in layout.attempts(job.nodes)
            ]
        ),
    }


def iso(stamp: float | None) -> str | None:
    """A moment of the API in ISO 8601 with its zone, as the CLI and the pages show it."""
    return None if stamp is None else iso_time(stamp)


def log_tail(path: Any, offset: int | None) -> dict[str, Any]:
    """New text of a log from ``offset`` (its last bytes when None), and where to read on."""
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, 2)
            start = max(0, size - LOG_TAIL_BYTES) if offset is None else min(offset, size)
            handle.seek(start)
            chunk = handle.read(LOG_CHUNK_BYTES)
    except FileNotFoundError:
        return {"offset": 0, "text": ""}
    return {"offset": start + len(chunk), "text": chunk.decode("utf-8", "replace")}
