"""The job runner: a detached process that runs one job to the end and records how it went.

``python -m ascendify.jobs.runner STORE JOB_ID`` with the full spec (credentials included) as
JSON on stdin: it never reads credentials from disk. It runs the nodes through the job's engine,
turns SIGTERM (``job stop``) into a graceful stop of every node, writes each state change to the
store and uploads the logs to ``log_url`` at the end.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ascendify._fs import shown
from ascendify.jobs.layout import JobLayout
from ascendify.jobs.node import NodeResult
from ascendify.jobs.report import membership_note
from ascendify.jobs.spec import JobSpec
from ascendify.jobs.store import JobStore
from ascendify.launch.restart import restart_told, restarts
from ascendify.storage import is_remote, local_path

if TYPE_CHECKING:
    from ascendify.jobs.tail import MetricsTail

STOPPED_EXIT_CODE = 128 + signal.SIGTERM
ATTEMPT_POLL = 0.5  # how often the node launchers' summaries are read for restarts
# A job's end waits for the metric reader to read the ranks' last lines (a loud rank's backlog)
# while it moves on; a reader that read nothing for READER_STALL seconds, or a stopped job's reader
# after READER_CATCH_UP_STOPPED, is left behind and the end recorded all the same.
READER_STALL = 60.0
READER_CATCH_UP_STOPPED = 10.0


def main(argv: Sequence[str] | None = None) -> int:
    store_dir, job_id = argv if argv is not None else sys.argv[1:]
    store = JobStore(Path(store_dir))
    spec = JobSpec.from_json(json.loads(sys.stdin.read()))
    sys.stdin.close()
    layout = JobLayout(store.job_dir(job_id), job_id)
    stop = threading.Event()

    def request_stop(signum: int, _frame: Any) -> None:
        if not stop.is_set():
            stop.set()
            # Not here: the interrupted code may be inside a store transaction.
            detail = f"{signal.Signals(signum).name} received"
            threading.Thread(target=store.transition, args=(job_id, "stopping", detail)).start()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    store.transition(job_id, "running", f"engine {spec.engine}, {spec.nodes} x {spec.cards}")
    ended, reader, tail = _read_metrics(spec, layout)
    watcher = threading.Thread(target=_watch_attempts, args=(spec, layout, store, ended))
    watcher.start()
    _sample_resources(store, layout, ended)
    try:
        results = _engine(spec.engine).run_nodes(spec, layout, store, stop)
    except Exception as error:  # the job must end in the store whatever went wrong here
        store.transition(job_id, "failed", str(error), exit_code=1, cause=f"runner: {error}")
        raise
    finally:
        ended.set()
        _wait_for_reader(reader, tail, stop)
        watcher.join()
        _upload_logs(spec, layout)
    state, code, cause = outcome(results, layout, stopped=stop.is_set())
    store.transition(job_id, state, cause or "", exit_code=code, cause=cause)
    return 0


def _read_metrics(
    spec: JobSpec, layout: JobLayout
) -> tuple[threading.Event, threading.Thread, MetricsTail]:
    """The metric reader's thread: it tails the rank logs until ``ended`` is set."""
    from ascendify.jobs.metrics import MetricParser, throughput_batch
    from ascendify.jobs.tail import MetricsTail

    parser = MetricParser(spec.metrics.items(), batch=throughput_batch(spec.hyper))
    tail = MetricsTail.for_job(layout, spec, parser)
    ended = threading.Event()
    reader = threading.Thread(target=tail.run, args=(ended,), name="metrics", daemon=True)
    reader.start()
    return ended, reader, tail


def _sample_resources(store: JobStore, layout: JobLayout, ended: threading.Event) -> None:
    """Sample the nodes' process trees (and the accelerators a tool can read) until ``ended``."""
    from ascendify.jobs.resources import ResourceSampler, accelerator_reader, run_sampler

    accelerators, what = accelerator_reader()
    with contextlib.suppress(OSError):
        print(f"ascendify job: resources: CPU and memory; {what}", flush=True)

    def node_pids() -> dict[int, int]:
        return {n.node: n.pid for n in store.nodes(layout.job_id) if n.pid is not None}

    sampler = ResourceSampler(node_pids, accelerators)
    threading.Thread(
        target=run_sampler, args=(sampler, layout.resources, ended), name="resources", daemon=True
    ).start()


def _wait_for_reader(reader: threading.Thread, tail: MetricsTail, stop: threading.Event) -> None:
    """Let the metric reader read every rank's last lines while it moves on (``tail`` is its
    :class:`~ascendify.jobs.tail.MetricsTail`), within a bound once a stop is asked for: nothing
    it does may keep the job's end from being recorded."""
    read, moved = tail.position(), time.monotonic()
    stopped: float | None = None
    while reader.is_alive():
        reader.join(0.5)
        now = time.monotonic()
        if tail.position() != read:
            read, moved = tail.position(), now
        if stop.is_set() and stopped is None:
            stopped = now
        if now - moved > READER_STALL or (
            stopped is not None and now - stopped > READER_CATCH_UP_STOPPED
        ):
            with contextlib.suppress(OSError):
                print(
                    "ascendify job: metrics: the reader had not read every line; the job's end "
                    "is recorded without the rest",
                    flush=True,
                )
            return


def _watch_attempts(
    spec: JobSpec, layout: JobLayout, store: JobStore, ended: threading.Event
) -> None:
    """Record each restart of the job in the store as the node launchers report it."""
    while True:
        last = ended.wait(ATTEMPT_POLL)
        for attempt in layout.attempts(spec.nodes):
            number, cause = attempt["attempt"], attempt["cause"]
            if restarts(attempt["state"], cause, number, spec.max_restarts):
                detail = restart_line(attempt, spec.max_restarts, layout.job_id)
                if store.get(layout.job_id).attempts < number + 2:
                    with contextlib.suppress(OSError):
                        print(f"ascendify job: {detail}", flush=True)
                store.record_attempt(layout.job_id, number + 2, detail)
        if last:
            return


def restart_line(attempt: dict[str, Any], max_restarts: int, job_id: str) -> str:
    """What a restart is told as in the runner's log and the job's events: as the launcher tells
    it on the console, the nodes it ran on, and where to see more."""
    membership = membership_note(attempt)
    ran_on = f" (it ran on {membership})" if membership else ""
    return f"{restart_told(attempt, max_restarts, ran_on)}; see `ascendify job describe {job_id}`"


def _engine(name: str) -> Any:
    if name == "ray":
        from ascendify.jobs import ray_engine

        return ray_engine
    from ascendify.jobs import local_engine

    return local_engine


def outcome(
    results: Sequence[NodeResult], layout: JobLayout, *, stopped: bool
) -> tuple[str, int, str | None]:
    """Final state, exit code and cause of a job from its nodes' results and run summaries."""
    if stopped:
        return "stopped", STOPPED_EXIT_CODE, None
    failed = [result for result in results if result.exit_code != 0]
    if not failed:
        return "succeeded", 0, None
    for result in failed:
        if result.failed_step is not None:
            cause = f"node {result.node}: {result.failed_step} exited with {result.exit_code}"
            return "failed", result.exit_code, cause
    first = failed[0]
    root = layout.root_cause(len(results))
    if root is not None:
        return "failed", first.exit_code, root_cause_line(root)
    return "failed", first.exit_code, f"node {first.node} exited with {first.exit_code}"


def root_cause_line(root: dict[str, Any]) -> str:
    if root["rank"] < 0:
        return f"node {root['node_rank']}: {root.get('error')}"
    code = root["exit_code"]
    how = f"killed by signal {-code}" if code < 0 else f"exit code {code}"
    return f"node {root['node_rank']} rank {root['rank']}: {how}"


def _upload_logs(spec: JobSpec, layout: JobLayout) -> None:
    """Copy the logs to ``log_url``; what is not copied is named in the runner's log.

    Nothing here may keep the job's end from being recorded: a job whose ranks all finished is
    not "runner lost" because a rank left a link loop or a FIFO among its logs.
    """
    if spec.log_url is None:
        return
    try:
        rows = _copy_logs(layout.logs, spec.log_url)
    except Exception as error:  # the job's state is recorded next, whatever went wrong here
        rows = [f"not copied: {error}"]
    for row in rows:
        with contextlib.suppress(OSError):  # the runner's log may be on a full disk
            print(f"ascendify job: log_url: {shown(row)}", flush=True)


def _copy_logs(logs: Path, log_url: str) -> list[str]:
    """Copy ``logs`` to ``log_url``; report lines for what was left out or renamed.

    A local copy never follows a link a rank left: links are copied as links (the ModelArts names
    of the rank logs stay links to them); FIFOs, sockets and unreadable files are left out.
    """
    if is_remote(log_url):
        from ascendify.storage import copy_tree  # fsspec and s3fs are loaded only when needed

        result = copy_tree(str(logs), log_url, progress=False)
        return [f"not copied: {entry}" for entry in result.left_out] + list(result.renamed)
    try:
        shutil.copytree(logs, local_path(log_url), symlinks=True, dirs_exist_ok=True)
    except shutil.Error as problems:
        return [f"not copied: {source}: {why}" for source, _target, why in problems.args[0]]
    return []


if __name__ == "__main__":
    sys.exit(main())
