"""An interrupted test run leaves no Ray process: the session's cluster is ended when the process
that holds it ends, whether its fixture's teardown ran or not (an interrupted pytest-xdist worker is
killed by its controller after 10 s, often before the teardown's end)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from tests.conftest import HANG_BOUND, ascendify_env
from tests.jobs.conftest import wait_for

SUITE = Path(__file__).parent / "fixtures" / "interrupted_suite.py"


def _same_process(record: dict[str, float]) -> psutil.Process | None:
    try:
        process = psutil.Process(int(record["pid"]))
        return process if process.create_time() == record["created"] else None
    except psutil.Error:
        return None


@pytest.mark.slow
@pytest.mark.parametrize(
    ("workers", "end"),
    [
        ("1", "ctrl-c"),  # SIGINT to the run's process group, as a terminal sends it
        ("0", "kill"),  # the process holding the cluster is killed: no teardown runs at all
    ],
)
def test_an_ended_run_leaves_no_ray_process(tmp_path: Path, workers: str, end: str) -> None:
    pids = tmp_path / "cluster.json"
    env = ascendify_env({"ASCENDIFY_TEST_CLUSTER_PIDS": str(pids)})
    command = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", workers,
        "--rootdir", str(SUITE.parents[2]), str(SUITE),
    ]  # fmt: skip
    # a session of its own: Ctrl-C reaches the run's whole process group, workers included
    run = subprocess.Popen(command, env=env, start_new_session=True, cwd=SUITE.parents[2])
    try:
        wait_for(lambda: pids.exists() or run.poll() is not None, HANG_BOUND, "the cluster")
        assert pids.exists(), f"the run ended before its cluster was up (exit {run.returncode})"
        found = json.loads(pids.read_text())
        cluster = [p for record in found["cluster"] if (p := _same_process(record))]
        assert len(cluster) > 2, "the cluster's processes were not found"  # 2 nodes, their parts
        if end == "ctrl-c":
            os.killpg(run.pid, signal.SIGINT)
        else:
            os.kill(found["holder"], signal.SIGKILL)
        run.wait(HANG_BOUND)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    wait_for(
        lambda: not _alive(cluster), HANG_BOUND, "the cluster to end", lambda: str(_alive(cluster))
    )


def _alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    alive = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(process)
        except psutil.Error:
            pass
    return alive
