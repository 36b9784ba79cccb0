"""Watching a job from the command line: its metrics, progress, every rank's logs, rerun with
changed hyperparameters, Ctrl-C on --wait; and the pages served by ``job ui``. Real processes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from ascendify.jobs.store import JobStore
from tests.conftest import HANG_BOUND, ascendify_env
from tests.jobs.conftest import JobCli, code_with, wait_for

pytestmark = pytest.mark.slow


@pytest.fixture
def steps_code(tmp_path: Path) -> Path:
    return code_with(tmp_path / "steps", "steps.py")


def test_metrics_progress_rerun_and_pages(job: JobCli, steps_code: Path, jobs_dir: Path) -> None:
    submitted = job(
        "submit", "--code-dir", str(steps_code), "--boot-file", "steps.py", "--name", "steps20",
        "--metric", r"top1=top1=(\d+)%", "--wait",
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    job_id = submitted.stdout.splitlines()[0]
    result = job("metrics", job_id, "--json")
    assert result.returncode == 0, result.stderr
    loss = next(s for s in json.loads(result.stdout)["series"] if s["name"] == "loss")
    assert loss["steps"] == list(range(20))
    assert loss["values"][0] == pytest.approx(2.0)
    assert loss["values"][19] == pytest.approx(0.1)
    top1 = job("metrics", job_id, "--csv", "--name", "top1").stdout.splitlines()
    assert top1[0] == "name,rank,step,value,time"
    assert [line.split(",")[3] for line in top1[1:]] == [str(float(50 + n)) for n in range(20)]
    row = next(line for line in job("list").stdout.splitlines() if line.startswith(job_id))
    assert row.split()[6:9] == ["succeeded", "19", "0.1"]

    rerun = job("rerun", job_id, "--hyper", "lr=0.5")
    assert rerun.returncode == 0, rerun.stderr
    second = rerun.stdout.strip()
    store = JobStore(jobs_dir)
    wait_for(lambda: store.get(second).state == "succeeded", 60, "the rerun to succeed")
    assert (store.get(second).rerun_of, store.get(second).spec["hyper"]) == (job_id, {"lr": "0.5"})
    assert "trains with lr 0.5" in job("logs", second).stdout

    ui = subprocess.Popen(
        [sys.executable, "-m", "ascendify", "job", "ui", "--port", "0"],
        env=ascendify_env({"ASCENDIFY_JOBS_DIR": str(jobs_dir)}),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert ui.stderr is not None
        line = ui.stderr.readline()
        assert "job pages at http://127.0.0.1:" in line, line
        base = line.split(" at ")[1].strip()
        with urllib.request.urlopen(base + "api/jobs", timeout=10) as response:
            listed = json.load(response)
        assert {entry["id"] for entry in listed} == {job_id, second}
        with urllib.request.urlopen(base + f"jobs/{job_id}", timeout=10) as response:
            assert response.status == 200
            assert "steps20" in response.read().decode()
    finally:
        ui.send_signal(signal.SIGINT)
        assert ui.wait(timeout=10) == 0


def test_logs_follow_every_node(job: JobCli, steps_code: Path) -> None:
    submitted = job(
        "submit", "--code-dir", str(steps_code), "--boot-file", "steps.py", "--nodes", "2",
        "--hyper", "steps=3",
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    followed = job("logs", submitted.stdout.strip(), "-f")
    assert followed.returncode == 0, followed.stderr
    assert "[rank 0]: step 2 loss" in followed.stdout
    assert "[rank 1]: step 2 loss" in followed.stdout


@pytest.mark.parametrize("stop", [False, True], ids=["detach", "stop-on-interrupt"])
def test_ctrl_c_on_wait(steps_code: Path, tmp_path: Path, jobs_dir: Path, stop: bool) -> None:
    gate = tmp_path / "gate"  # never created: the job waits after step 9
    command = [
        sys.executable, "-m", "ascendify", "job", "submit", "--code-dir", str(steps_code),
        "--boot-file", "steps.py", "--env", f"GATE={gate}", "--wait",
        *(["--stop-on-interrupt"] if stop else []),
    ]  # fmt: skip
    waiting = subprocess.Popen(
        command,
        env=ascendify_env({"ASCENDIFY_JOBS_DIR": str(jobs_dir)}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert waiting.stdout is not None
    job_id = waiting.stdout.readline().strip()
    while "step 9 loss" not in waiting.stdout.readline():
        pass
    waiting.send_signal(signal.SIGINT)
    _, stderr = waiting.communicate(timeout=HANG_BOUND)
    store = JobStore(jobs_dir)
    if stop:
        assert waiting.returncode == 1, stderr
        assert f"job {job_id} stopped" in stderr
        assert store.get(job_id).state == "stopped"
    else:
        assert waiting.returncode == 130, stderr
        assert f"detached: job {job_id} keeps running" in stderr
        assert store.get(job_id).state == "running"
        gate.touch()
        wait_for(lambda: store.get(job_id).state == "succeeded", 60, "the job to go on and succeed")


def test_tensorboard_scalars_are_read(job: JobCli, tmp_path: Path) -> None:
    pytest.importorskip("tensorboard", reason="the tensorboard extra reads event files")
    code = code_with(tmp_path / "tb", "tb.py")
    submitted = job("submit", "--code-dir", str(code), "--boot-file", "tb.py", "--wait")
    assert submitted.returncode == 0, submitted.stderr
    result = job("metrics", submitted.stdout.splitlines()[0], "--json", "--name", "train/loss")
    (series,) = json.loads(result.stdout)["series"]
    assert (series["rank"], series["steps"]) == (-1, [0, 1, 2, 3, 4])
    assert series["values"] == pytest.approx([1.0, 0.5, 1 / 3, 0.25, 0.2])
