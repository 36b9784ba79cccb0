"""The JSON API and the pages' HTML, over HTTP on a live server."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from ascendify.explain.catalogue import load
from ascendify.jobs.store import JobStore
from tests.web.conftest import SECRET, Serve, failed_job, hang_attempts, recorded_job


def fetch(url: str, method: str = "GET", headers: dict[str, str] | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def get_json(url: str) -> Any:
    status, body = fetch(url)
    assert status == 200, body
    return json.loads(body)


def test_list_job_metrics_and_logs(store: JobStore, serve: Serve) -> None:
    first = recorded_job(store, "baseline", [2.0, 1.0, 0.5], log="step 0 loss 2.0\n")
    second = recorded_job(store, "npu-port", [2.1, 1.1], state="running")
    base = serve()
    listed = get_json(base + "api/jobs")
    assert [job["name"] for job in listed] == ["npu-port", "baseline"]
    done = listed[1]
    assert (done["state"], done["attempts"], done["progress"]["step"]) == ("succeeded", 1, 2)
    assert done["progress"]["loss"] == 0.5
    assert done["duration"] >= 0
    job = get_json(base + f"api/jobs/{first.id}")
    assert [event["state"] for event in job["events"]] == ["queued", "running", "succeeded"]
    assert job["spec"]["hyper"] == {"lr": "0.1", "hf_token": "***"}
    metrics = get_json(base + f"api/jobs/{second.id}/metrics?name=loss&times=1")
    assert metrics["series"] == [
        {
            "name": "loss",
            "rank": 0,
            "count": 2,
            "steps": [0, 1],
            "values": [2.1, 1.1],
            "times": [1.0, 1.0],
            "attempts": [[0, 0, 2]],  # one attempt: all its points
            "printed_steps": True,  # the chart is drawn on the steps
        }
    ]
    untimed = get_json(base + f"api/jobs/{second.id}/metrics")["series"][0]
    assert (untimed["values"], "times" in untimed) == ([2.1, 1.1], False)
    tail = get_json(base + f"api/jobs/{first.id}/logs?rank=0")
    assert (tail["text"], tail["offset"]) == ("step 0 loss 2.0\n", 16)
    assert get_json(base + f"api/jobs/{first.id}/logs?rank=0&offset=16")["text"] == ""
    status, page = fetch(base + f"jobs/{first.id}")
    assert status == 200
    assert "<title>baseline" in page
    assert "uPlot.iife.min.js" in page
    assert fetch(base + "static/uPlot.iife.min.js")[0] == 200  # served from the package


def test_no_secret_on_any_page(store: JobStore, serve: Serve) -> None:
    job = recorded_job(store, "secretive", [1.0])
    base = serve()
    for path in (
        "",
        "api/jobs",
        f"jobs/{job.id}",
        f"api/jobs/{job.id}",
        f"api/jobs/{job.id}/metrics",
    ):
        status, body = fetch(base + path)
        assert status == 200
        assert SECRET not in body
    shown = get_json(base + f"api/jobs/{job.id}")["spec"]["env"]
    assert shown == {"GITHUB_PAT": "***", "HCCL_CONNECT_TIMEOUT": "1800"}


def test_unknown_job_and_rank_are_404(store: JobStore, serve: Serve) -> None:
    job = recorded_job(store, "one", [1.0])
    base = serve()
    assert fetch(base + "api/jobs/nosuchjob")[0] == 404
    status, body = fetch(base + f"api/jobs/{job.id}/logs?rank=3")
    assert status == 404
    assert "outside 0..0" in json.loads(body)["error"]
    status, body = fetch(base + f"api/jobs/{job.id}/logs?rank=0&offset=-5")  # once HTTP 500
    assert status == 400
    assert "offset -5: a byte offset is 0 or more" in json.loads(body)["error"]


@pytest.mark.parametrize(
    ("allow", "headers", "status"),
    [
        (False, {"X-Ascendify-Token": "{token}", "Origin": "{base}"}, 403),  # read-only
        (True, {"Origin": "{base}"}, 403),  # no token: a plain cross-site form
        (True, {"X-Ascendify-Token": "not-it", "Origin": "{base}"}, 403),
        (True, {"X-Ascendify-Token": "{token}", "Origin": "http://evil.example"}, 403),
        (True, {"X-Ascendify-Token": "{token}"}, 403),  # no origin at all
        (True, {"X-Ascendify-Token": "{token}", "Origin": "{base}"}, 202),
    ],
)
def test_actions_need_the_flag_the_token_and_the_same_origin(
    store: JobStore, serve: Serve, allow: bool, headers: dict[str, str], status: int
) -> None:
    job = recorded_job(store, "ended", [1.0])  # stopping an ended job changes nothing
    base = serve(allow_actions=allow)
    token = serve.token(base) if allow else "any"
    given = {
        key: value.format(base=base.rstrip("/"), token=token) for key, value in headers.items()
    }
    assert fetch(base + f"api/jobs/{job.id}/stop", "POST", given)[0] == status
    assert store.get(job.id).state == "succeeded"


def test_dns_rebinding_reads_and_acts_on_nothing(store: JobStore, serve: Serve) -> None:
    """A page of attacker.example whose name resolves to 127.0.0.1: its requests name its own
    host and origin. They once stopped a running job (202) and reran another (201)."""
    job = recorded_job(store, "private", [1.0], log="step 0 loss 1.0\n", state="running")
    base = serve(allow_actions=True)
    port = base.rstrip("/").rsplit(":", 1)[1]
    foreign = {"Host": f"attacker.example:{port}", "Origin": f"http://attacker.example:{port}"}
    for path in ("", f"jobs/{job.id}", "api/jobs", f"api/jobs/{job.id}", f"api/jobs/{job.id}/logs"):
        status, body = fetch(base + path, headers=foreign)
        assert status == 403, path
        assert "private" not in body
        assert "step 0" not in body
        assert "127.0.0.1" not in body  # nor the names it serves
    acting = {**foreign, "X-Ascendify-Token": serve.token(base)}  # even with the token
    assert fetch(base + f"api/jobs/{job.id}/stop", "POST", acting)[0] == 403
    assert fetch(base + f"api/jobs/{job.id}/rerun", "POST", acting)[0] == 403
    assert [(one.id, one.state) for one in store.jobs()] == [(job.id, "running")]
    # Another port of this host is another server: refused as well.
    assert fetch(base + "api/jobs", headers={"Host": "127.0.0.1:1"})[0] == 403


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "LOCALHOST", "[::1]"])
def test_the_served_names_are_answered(store: JobStore, serve: Serve, host: str) -> None:
    base = serve()
    port = base.rstrip("/").rsplit(":", 1)[1]
    assert fetch(base + "api/jobs", headers={"Host": f"{host}:{port}"})[0] == 200


def test_served_hosts() -> None:
    from ascendify.web import served_hosts

    assert served_hosts("127.0.0.1", 8422) == {
        "127.0.0.1:8422", "localhost:8422", "[::1]:8422"
    }  # fmt: skip
    assert "box.example:80" in served_hosts("box.example", 80)
    assert "box.example" in served_hosts("box.example", 80)  # the default port goes unsaid
    everywhere = served_hosts("0.0.0.0", 8422)
    assert {"127.0.0.1:8422", "0.0.0.0:8422"} <= everywhere
    assert not any(name.startswith("attacker") for name in everywhere)


def test_the_token_reaches_the_page_and_stays(store: JobStore, serve: Serve) -> None:
    """Opened with ?token=, the page holds it for its buttons, and a cookie keeps it for the
    pages opened from there; without it the page holds none."""
    job = recorded_job(store, "one", [1.0])
    base = serve(allow_actions=True)
    token = serve.token(base)
    request = urllib.request.Request(base + f"?token={token}")
    with urllib.request.urlopen(request, timeout=10) as response:
        cookie = response.headers["Set-Cookie"].split(";")[0]
    assert cookie.endswith("=" + token)
    status, page = fetch(base + f"jobs/{job.id}", headers={"Cookie": cookie})
    assert (status, f'data-token="{token}"' in page) == (200, True)
    status, page = fetch(base + f"jobs/{job.id}")
    assert (status, token in page) == (200, False)


@pytest.mark.parametrize("port", ["-1", "65536", "99999"])
def test_a_port_outside_0_to_65535_is_refused(
    tmp_path: Path, port: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--port 99999`` once served on another port (65537 on port 1)."""
    from ascendify.cli import main

    assert main(["job", "ui", "--jobs-dir", str(tmp_path), "--port", port]) == 2
    assert f"--port {port}: a port is 0..65535" in capsys.readouterr().err


def test_metrics_are_sent_downsampled(store: JobStore, serve: Serve) -> None:
    """A job of 50,000 points: the page gets a chart's worth of each series, spikes kept (all
    1.1M points of a job, 14 MB, were sent every 2 s while its page was open)."""
    losses = [1.0 + (n % 7) / 100 for n in range(50_000)]
    losses[23_457], losses[7] = 50.0, -3.0
    job = recorded_job(store, "long", losses)
    base = serve()
    status, body = fetch(base + f"api/jobs/{job.id}/metrics")
    assert status == 200
    assert len(body) < 100_000  # the full series: 600 KB
    (series,) = json.loads(body)["series"]
    assert series["count"] == 50_000
    assert 1000 < len(series["values"]) <= 4000
    assert (max(series["values"]), min(series["values"])) == (50.0, -3.0)
    assert series["steps"][-1] == 49_999
    (few,) = get_json(base + f"api/jobs/{job.id}/metrics?points=10")["series"]
    assert len(few["values"]) <= 10
    assert fetch(base + f"api/jobs/{job.id}/metrics?points=1")[0] == 400


def test_metrics_are_read_on_from_the_last_request(store: JobStore, serve: Serve) -> None:
    """The server parses only the points added since the page last asked."""
    from ascendify.jobs.layout import JobLayout
    from ascendify.jobs.metrics import Point, append_points

    job = recorded_job(store, "growing", [3.0, 2.0], state="running")
    base = serve()
    first = get_json(base + f"api/jobs/{job.id}/metrics")["series"][0]
    assert (first["count"], first["values"]) == (2, [3.0, 2.0])
    metrics = JobLayout(store.job_dir(job.id), job.id).metrics
    append_points(metrics, [Point(0, "loss", 2, 1.0, 2.0), Point(1, "loss", 0, 9.0, 2.0)])
    with metrics.open("a") as handle:
        handle.write("0\tloss\t3\t0.")  # a line being written: read once it is whole
    series = get_json(base + f"api/jobs/{job.id}/metrics")["series"]
    assert [(s["rank"], s["steps"], s["values"]) for s in series] == [
        (0, [0, 1, 2], [3.0, 2.0, 1.0]),
        (1, [0], [9.0]),
    ]
    with metrics.open("a") as handle:
        handle.write("5\t4.0\n")
    (rank_0,) = get_json(base + f"api/jobs/{job.id}/metrics?rank=0&times=1")["series"]
    assert (rank_0["steps"], rank_0["values"]) == ([0, 1, 2, 3], [3.0, 2.0, 1.0, 0.5])
    assert rank_0["times"] == [1.0, 1.0, 2.0, 4.0]


def test_the_list_filters_searches_and_pages_beyond_500(store: JobStore, serve: Serve) -> None:
    for n in range(520):
        recorded_job(store, f"sweep-{n}", [], state="failed" if n % 4 == 0 else "succeeded")
    base = serve()
    status, body = fetch(base + "api/jobs?offset=500&limit=100")
    assert status == 200
    assert len(json.loads(body)) == 20  # the 520 jobs, paged: 500 came before
    with urllib.request.urlopen(base + "api/jobs?limit=1", timeout=10) as response:
        assert response.headers["X-Total-Count"] == "520"
    failed = get_json(base + "api/jobs?state=failed&limit=500")
    assert len(failed) == 130
    assert {job["state"] for job in failed} == {"failed"}
    assert {job["exit_code"] for job in failed} == {1}
    found = get_json(base + "api/jobs?q=SWEEP-51")
    assert sorted(job["name"] for job in found) == [f"sweep-{n}" for n in sorted(
        [51, *range(510, 520)], key=str)]  # fmt: skip
    assert fetch(base + "api/jobs?limit=501")[0] == 400
    assert fetch(base + "api/jobs?offset=-1")[0] == 400


def test_a_job_names_its_flavor_and_attempts(store: JobStore, serve: Serve) -> None:
    job = recorded_job(store, "flavored", [1.0], flavor="modelarts.kat1.xlarge")
    hang_attempts(store, job.id)
    base = serve()
    (listed,) = get_json(base + "api/jobs")
    assert (listed["flavor"], listed["nodes"], listed["exit_code"]) == (
        "modelarts.kat1.xlarge", 1, 0)  # fmt: skip
    attempts = get_json(base + f"api/jobs/{job.id}")["attempts_detail"]
    assert [a["attempt"] for a in attempts] == [0, 1]
    assert "in wait_forever" in attempts[0]["stacks"]["0"]
    # Each moment also in ISO 8601 with its zone, as the CLI and the pages show it.
    assert [(a["start_iso"], a["end_iso"]) for a in attempts] == [
        ("1970-01-01T00:00:00+00:00", "1970-01-01T00:00:02+00:00"),
        ("1970-01-01T00:00:02+00:00", "1970-01-01T00:00:07+00:00"),
    ]
    assert (attempts[0]["start"], attempts[1]["end"]) == (0.5, 7.0)  # the numbers stay


def test_every_moment_of_the_api_is_also_in_iso_8601_with_its_zone(
    store: JobStore, serve: Serve
) -> None:
    done = recorded_job(store, "done", [1.0])
    running = recorded_job(store, "running", [1.0], state="running")
    base = serve()
    listed = {job["name"]: job for job in get_json(base + "api/jobs")}
    for job in listed.values():
        for name in ("created", "started"):
            _same_moment(job[f"{name}_iso"], job[name])
    _same_moment(listed["done"]["ended_iso"], listed["done"]["ended"])
    assert (listed["running"]["ended"], listed["running"]["ended_iso"]) == (None, None)
    events = get_json(base + f"api/jobs/{done.id}")["events"]
    assert [event["state"] for event in events] == ["queued", "running", "succeeded"]
    for event in events:
        _same_moment(event["time_iso"], event["time"])
    assert get_json(base + f"api/jobs/{running.id}")["ended_iso"] is None


def _same_moment(iso: str, stamp: float) -> None:
    """``iso`` is ISO 8601 in UTC with the zone, to the second, and names the moment ``stamp``."""
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", iso), iso
    assert datetime.fromisoformat(iso).timestamp() == int(stamp)


def test_an_ended_job_without_metrics_names_the_metric_option(
    store: JobStore, capsys: pytest.CaptureFixture[str]
) -> None:
    from ascendify.cli import main

    ended = recorded_job(store, "silent", [])
    running = recorded_job(store, "starting", [], state="running")
    assert main(["job", "metrics", ended.id, "--jobs-dir", str(store.root)]) == 0
    said = capsys.readouterr().err
    assert f"job {ended.id} ended without metrics" in said
    assert "--metric NAME=REGEX" in said
    assert main(["job", "metrics", running.id, "--jobs-dir", str(store.root)]) == 0
    assert f"no metrics read from job {running.id} yet" in capsys.readouterr().err


def test_a_failed_job_gives_why_it_failed(store: JobStore, serve: Serve) -> None:
    failed = failed_job(store, "oom-run")
    fine = recorded_job(store, "fine", [1.0])
    cache = store.job_dir(failed.id) / "cause.json"
    cache.write_text(json.dumps({"cause": "rank 1: NPU-OOM", "short": "rank 1: NPU-OOM"}))
    base = serve()  # the cache above was written before the verdict was kept: read again
    verdict = get_json(base + f"api/jobs/{failed.id}")["verdict"]
    root = verdict["root"]
    assert (root["rank"], verdict["all_echo"]) == (1, False)
    headline = root["headline"]
    oom = load().by_id("NPU-OOM")
    assert (headline["id"], headline["layer"], headline["role"]) == (
        "NPU-OOM",
        "torch_npu",
        "cause",
    )
    assert (headline["meaning"], headline["fix"], headline["source"]) == (
        oom.meaning,
        oom.fix,
        oom.source,
    )
    assert headline["causes"] == list(oom.causes)
    assert headline["line"] == 2
    assert "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True" in headline["oom"]["advice"]
    assert headline["oom"]["fragmented"] is True
    assert "findings" not in root  # each rank's headline only
    (echo,) = verdict["consequences"]
    assert (echo["rank"], echo["headline"]["id"], echo["headline"]["role"]) == (
        0, "HCCL-EI0002", "echo"
    )  # fmt: skip
    assert verdict["order"] == [1, 0]
    assert verdict["short"] == "rank 1: NPU-OOM"
    cached = json.loads(cache.read_text())
    assert cached["verdict"] == verdict  # the page reads it from now on, not the logs
    assert get_json(base + f"api/jobs/{fine.id}")["verdict"] is None
