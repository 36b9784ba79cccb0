"""The JSON API and the pages' HTML, over HTTP on a live server."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from ascendify.jobs.store import JobStore
from tests.web.conftest import SECRET, Serve, recorded_job


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
        {"name": "loss", "rank": 0, "steps": [0, 1], "values": [2.1, 1.1], "times": [1.0, 1.0]}
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


@pytest.mark.parametrize(
    ("allow", "headers", "status"),
    [
        (False, {"X-Ascendify-Action": "1", "Origin": "{base}"}, 403),  # read-only
        (True, {"Origin": "{base}"}, 403),  # no action header: a plain cross-site form
        (True, {"X-Ascendify-Action": "1", "Origin": "http://evil.example"}, 403),
        (True, {"X-Ascendify-Action": "1"}, 403),  # no origin at all
        (True, {"X-Ascendify-Action": "1", "Origin": "{base}"}, 202),
    ],
)
def test_actions_need_the_flag_and_the_same_origin(
    store: JobStore, serve: Serve, allow: bool, headers: dict[str, str], status: int
) -> None:
    job = recorded_job(store, "ended", [1.0])  # stopping an ended job changes nothing
    base = serve(allow_actions=allow)
    given = {key: value.format(base=base.rstrip("/")) for key, value in headers.items()}
    assert fetch(base + f"api/jobs/{job.id}/stop", "POST", given)[0] == status
    assert store.get(job.id).state == "succeeded"
