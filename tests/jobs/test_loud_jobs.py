"""Jobs whose ranks print a lot, or whose users' patterns would hang a backtracking regex engine:
every line is read, the job's end is recorded, and a stop is obeyed. Real processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ascendify.jobs.layout import JobLayout
from ascendify.jobs.store import JobStore
from tests.conftest import ascendify_env
from tests.jobs.conftest import JobCli, code_with, wait_for

pytestmark = pytest.mark.slow

BURST = 300_000


@pytest.fixture
def loud_code(tmp_path: Path) -> Path:
    return code_with(tmp_path / "loud", "loud.py")


def _series(job: JobCli, job_id: str, name: str) -> dict[str, list[float]]:
    result = job("metrics", job_id, "--json", "--name", name)
    assert result.returncode == 0, result.stderr
    (series,) = json.loads(result.stdout)["series"]
    return dict(series)


@pytest.mark.parametrize(
    ("pattern", "extra"),
    [("acc=[0-9.]*", "acc="), ("x=(a+)+b", "x=" + "a" * 40)],
    ids=["empty-tail", "backtracking"],
)
def test_user_patterns_never_keep_a_job_running(
    job: JobCli, loud_code: Path, pattern: str, extra: str
) -> None:
    """Both once kept a finished job 'running' for 25 minutes: the end of the output matched the
    empty string again and again, or the regex engine backtracked for ever."""
    submitted = job(
        "submit", "--code-dir", str(loud_code), "--boot-file", "loud.py", "--hyper", "lines=200",
        "--hyper", f"extra={extra}", "--metric", f"acc={pattern}", "--wait", timeout=180,
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    job_id = submitted.stdout.splitlines()[0]
    assert f"job {job_id} succeeded" in submitted.stderr
    if pattern.startswith("acc"):
        assert _series(job, job_id, "acc")["values"][:3] == [0.0, 0.01, 0.02]


def test_a_burst_of_300000_lines_is_read_whole(job: JobCli, loud_code: Path) -> None:
    """The reader once read 4 MiB a second and a last time at the end: 146,240 of 300,001."""
    submitted = job(
        "submit", "--code-dir", str(loud_code), "--boot-file", "loud.py",
        "--hyper", f"lines={BURST}", "--wait", timeout=600,
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    loss = _series(job, submitted.stdout.splitlines()[0], "loss")
    assert len(loss["values"]) == BURST
    assert loss["steps"][-1] == BURST - 1
    assert loss["values"][-1] == pytest.approx(1 / BURST, abs=1e-6)


def test_stop_is_obeyed_while_the_reader_reads(
    job: JobCli, loud_code: Path, jobs_dir: Path, tmp_path: Path
) -> None:
    """A rank printing a burst and then waiting: ``job stop`` ends the job while the reader has
    lines to read, and the job is recorded stopped."""
    submitted = subprocess.run(
        [sys.executable, "-m", "ascendify", "job", "submit", "--code-dir", str(loud_code),
         "--boot-file", "loud.py", "--hyper", f"lines={BURST}", "--metric", "x=x=(a+)+b",
         "--env", f"GATE={tmp_path / 'never'}"],
        env=ascendify_env({"ASCENDIFY_JOBS_DIR": str(jobs_dir)}),
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    job_id = submitted.stdout.strip()
    store = JobStore(jobs_dir)
    layout = JobLayout(store.job_dir(job_id), job_id)
    wait_for(layout.metrics.exists, 120, "the first points")
    stopped = job("stop", job_id, timeout=120)
    assert stopped.returncode == 0, stopped.stderr
    assert store.get(job_id).state == "stopped"
