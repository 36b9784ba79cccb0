"""Resource curves: the sampler on this process's tree, the ``job top`` frame, and a real 2-node
job whose nodes and ranks are sampled, shown by ``job top`` and the API, drawn on its page."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
import pytest

from ascendify.jobs.layout import JobLayout
from ascendify.jobs.metrics import Point, read_points, read_series
from ascendify.jobs.report import top_frame
from ascendify.jobs.resources import ResourceSampler, accelerator_reader
from ascendify.jobs.store import JobStore
from ascendify.moments import iso_time
from tests.conftest import HANG_BOUND
from tests.jobs.conftest import JobCli, job_logs, wait_for
from tests.web.conftest import Serve
from tests.web.test_pages import artifacts, browser, chart_attribute, until, x_range

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

__all__ = ["artifacts", "browser"]  # the page tests' fixtures, used here too


def test_the_sampler_reads_a_node_tree_and_the_host() -> None:
    sampler = ResourceSampler(lambda: {0: os.getpid()})
    sum(range(2_000_000))  # some CPU time between the samples
    points = {(p.rank, p.name): p.value for p in sampler.sample(5.0)}
    # the tree of this process: itself, and whatever children other tests of this worker left
    assert points[(-1, "node0/pss")] >= 0.8 * psutil.Process().memory_full_info().pss / 2**20
    assert (-1, "node0/cpu") in points
    assert 0 <= points[(-1, "host/cpu")] <= 100
    assert points[(-1, "host/mem")] > 0


FORKED = """
import os, sys
shared = bytearray(b"x") * (64 << 20)  # 64 MiB written, then shared by every child until exit
for _ in range(8):
    if os.fork() == 0:
        sys.stdin.read()  # until the test closes the pipe
        os._exit(0)
print("forked", flush=True)
sys.stdin.read()
"""


@pytest.mark.slow
def test_a_tree_of_forked_children_counts_shared_memory_once() -> None:
    # resident sizes would count the parent's 64 MiB nine times (over 576 MiB); PSS counts it once
    parent = psutil.Popen(
        [sys.executable, "-c", FORKED], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert parent.stdin is not None
    assert parent.stdout is not None
    try:
        assert parent.stdout.readline() == "forked\n"
        tree = [parent, *parent.children()]
        assert len(tree) == 9
        resident = sum(p.memory_info().rss for p in tree) / 2**20
        points = {
            (p.rank, p.name): p.value for p in ResourceSampler(lambda: {0: parent.pid}).sample(1.0)
        }
        memory = points[(-1, "node0/pss")]
        assert 64 <= memory < 0.5 * resident, (memory, resident)
    finally:
        parent.stdin.close()
        parent.wait(HANG_BOUND)


@pytest.mark.slow
def test_a_gone_node_gives_an_empty_tree() -> None:
    gone = psutil.Popen(["true"]) if shutil.which("true") else None
    if gone is None:
        pytest.skip("no `true` command")
    gone.wait()
    points = ResourceSampler(lambda: {1: gone.pid}).sample(1.0)
    assert {(p.rank, p.name): p.value for p in points}[(-1, "node1/cpu")] == 0.0


def test_accelerators_are_read_or_the_reason_is_given() -> None:
    reader, what = accelerator_reader()
    nvml = importlib.util.find_spec("pynvml") is not None
    if reader is None:
        assert what.startswith("no accelerator series")
        assert ("nvidia-ml-py" in what) == (not nvml)
    else:
        assert "NVML" in what or "npu-smi" in what


def test_gpus_are_sampled_where_nvml_reads_them() -> None:
    if shutil.which("nvidia-smi") is None or importlib.util.find_spec("pynvml") is None:
        pytest.skip("no NVIDIA GPU here (nvidia-smi) or no nvidia-ml-py: no GPU series to read")
    reader, what = accelerator_reader()
    assert reader is not None, what
    found = dict(reader())
    assert 0 <= found["gpu0/util"] <= 100
    assert found["gpu0/mem"] >= 0


def test_the_top_frame_shows_the_last_sample(store_job: tuple[JobStore, str]) -> None:
    store, job_id = store_job
    old = [Point(-1, "node0/cpu", None, 1.0, 10.0), Point(0, "cpu", None, 2.0, 10.0)]
    new = [
        Point(-1, "node0/cpu", None, 150.5, 13.0),
        Point(-1, "node0/pss", None, 2048.0, 13.0),
        Point(0, "cpu", None, 99.5, 13.0),
        Point(0, "pss", None, 1500.25, 13.0),
        Point(-1, "host/cpu", None, 40.0, 13.0),
        Point(-1, "host/mem", None, 9000.0, 13.0),
        Point(-1, "gpu0/util", None, 87.0, 13.0),
        Point(-1, "gpu0/mem", None, 30000.0, 13.0),
    ]
    frame = top_frame(store.get(job_id), old + new).splitlines()
    assert frame[1] == f"sampled {iso_time(13.0)}"
    assert iso_time(13.0) == "1970-01-01T00:00:13+00:00"
    assert frame[3].split() == ["NODE", "RANK", "CPU", "%", "PSS", "MiB"]
    assert frame[4].split() == ["0", "all", "150.5", "2,048.0"]
    assert frame[5].split() == ["0", "0", "99.5", "1,500.2"]
    assert "host: CPU 40.0 % of all cores, memory used 9,000.0 MiB" in frame
    assert "gpu0: utilisation 87.0 %, memory 30,000.0 MiB" in frame
    assert top_frame(store.get(job_id), []).endswith("no resource samples yet (the runner "
                                                      "takes one every few seconds)")  # fmt: skip


@pytest.fixture
def store_job(tmp_path: Path) -> tuple[JobStore, str]:
    store = JobStore(tmp_path / "store")
    spec = {"name": "top", "engine": "local", "nodes": 1, "cards": 1, "code_dir": "/code",
            "boot_file": "train.py"}  # fmt: skip
    return store, store.create(spec).id


@pytest.mark.slow
def test_a_two_node_job_is_sampled_per_node_and_rank(
    job: JobCli, project: Path, jobs_dir: Path, browser: WebDriver, artifacts: Path
) -> None:
    submitted = job(
        "submit", "--code-dir", str(project), "--boot-file", "rank.py", "--nodes", "2",
        "--cards", "1", "--hyper", "mode=hang", "--name", "resources",
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    job_id = submitted.stdout.split()[0]
    store = JobStore(jobs_dir)
    path = JobLayout(store.job_dir(job_id), job_id).resources
    wanted = {(-1, "node0/cpu"), (-1, "node1/pss"), (0, "cpu"), (1, "pss"), (-1, "host/cpu")}
    try:
        wait_for(
            lambda: wanted <= {(p.rank, p.name) for p in read_points(path)},
            120,
            "a sample of both nodes and both ranks",
            lambda: job_logs(jobs_dir, job_id),
        )
        top = job("top", job_id, "--once")
        assert top.returncode == 0, top.stderr
        rows = [line.split() for line in top.stdout.splitlines()]
        assert rows[next(i for i, r in enumerate(rows) if r[:2] == ["0", "0"])][:2] == ["0", "0"]
        assert any(row[:2] == ["1", "all"] for row in rows), top.stdout
        assert any(row[:2] == ["1", "1"] and float(row[3]) > 1 for row in rows), top.stdout
        assert "+00:00" in top.stdout
        _page_draws_the_resources(store, job_id, browser, artifacts)
    finally:
        job("stop", job_id)
    series = {(s.name, s.rank) for s in read_series(path)}
    assert {("node0/cpu", -1), ("node1/cpu", -1), ("cpu", 0), ("cpu", 1)} <= series


def _page_draws_the_resources(
    store: JobStore, job_id: str, driver: WebDriver, folder: Path
) -> None:
    """The API returns the series; the page draws the CPU chart with both nodes and ranks."""
    served = Serve(store)
    try:
        base = served()
        with urllib.request.urlopen(f"{base}api/jobs/{job_id}/resources") as answer:
            found = json.load(answer)
        names = {(s["name"], s["rank"]) for s in found["series"]}
        assert {("node0/cpu", -1), ("node1/pss", -1), ("cpu", 0), ("pss", 1)} <= names
        assert all(len(s["times"]) == len(s["values"]) >= 1 for s in found["series"])
        driver.get(f"{base}jobs/{job_id}")
        until(lambda: driver.execute_script("return document.body.dataset.resourcesLoaded"),
              30, "the resource curves")  # fmt: skip
        start = min(s["times"][0] for s in found["series"])
        (rank_0,) = [s["times"] for s in found["series"] if (s["name"], s["rank"]) == ("cpu", 0)]
        low, high = round(rank_0[0] - start), round(rank_0[-1] - start)
        # Drawn on an x scale spanning its samples (the ranks' and nodes' lines lie on one
        # another here, idle ranks' at 0%: the colour of each is not to be seen).
        until(lambda: _spans(x_range(driver, "resources cpu"), low, high), 30, f"x {low}..{high}")
        assert chart_attribute(driver, "resources cpu", "lines") == "4"  # 2 nodes, 2 ranks
        driver.save_screenshot(str(folder / "job-resources.png"))
    finally:
        served.close()


def _spans(scale: list[float | None], low: float, high: float) -> bool:
    """Whether an x scale is set and holds ``low`` to ``high``."""
    first, last = scale
    return first is not None and last is not None and first <= low and high <= last
