"""The job page's performance section: the API gives ``ascendify perf``'s analysis of a job's
profile, and the page draws a stacked bar per rank with the verdict (a real headless Chromium)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ascendify.jobs.layout import JobLayout
from ascendify.jobs.store import JobRecord, JobStore
from tests.perf.synthetic import PlannedStep, write_kineto
from tests.web.conftest import Serve, recorded_job
from tests.web.test_pages import browser, until  # noqa: F401 (the module's browser fixture)

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

HEALTHY = PlannedStep(idle=200, computing=2000, communication=3000)
SLOW = PlannedStep(idle=3100, computing=2000, communication=100)  # waits on its host


def profiled_job(store: JobStore) -> JobRecord:
    """A 2-rank job whose ranks wrote traces, rank 1 slowed by its host."""
    job = recorded_job(store, "profiled", [1.0], cards=2)
    profile = JobLayout(store.job_dir(job.id), job.id).launcher_dir(0) / "profile"
    for rank, plan in ((0, HEALTHY), (1, SLOW)):
        write_kineto(profile / f"rank_{rank}" / "attempt_0.pt.trace.json", rank, [plan] * 3)
    return job


def _get(url: str) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, None


def test_the_api_gives_the_split_and_the_verdict_of_a_profiled_job(
    store: JobStore, serve: Serve
) -> None:
    profiled = profiled_job(store)
    plain = recorded_job(store, "plain", [1.0])
    base = serve()
    status, result = _get(base + f"api/jobs/{profiled.id}/perf")
    assert status == 200
    perf = result["perf"]
    assert (perf["slow_ranks"], perf["cause"]) == ([1], "host")
    assert [rank["rank"] for rank in perf["ranks"]] == [0, 1]
    assert _get(base + f"api/jobs/{plain.id}/perf") == (200, {"job": plain.id, "perf": None})
    assert _get(base + "api/jobs/nosuchjob/perf")[0] == 404


@pytest.mark.slow
def test_the_page_draws_a_bar_per_rank_and_the_verdict(
    store: JobStore,
    serve: Serve,
    browser: WebDriver,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    job = profiled_job(store)
    browser.get(serve() + f"jobs/{job.id}")
    until(
        lambda: browser.execute_script("return !document.getElementById('perf-section').hidden"),
        30,
        "the performance section",
    )
    assert browser.find_element("id", "perf-verdict").text.startswith("rank 1 is slow (host)")
    widths = browser.execute_script(
        "return [...document.querySelectorAll('.perf-row')].map((row) => "
        "Object.fromEntries([...row.querySelectorAll('.perf-part')].map("
        "(part) => [part.dataset.part, part.getBoundingClientRect().width])))"
    )
    assert len(widths) == 2
    # the healthy rank's bar is mostly waiting, the slow rank's mostly preparing
    assert widths[0]["communication_not_overlapped_ms"] > widths[0]["preparing_ms"]
    assert widths[1]["preparing_ms"] > widths[1]["communication_not_overlapped_ms"]
    browser.save_screenshot(str(tmp_path / "perf-section.png"))
