"""Elastic jobs with real processes: loopback "nodes" (one launcher each, on 127.0.0.N), gloo, a
loop that checkpoints every step; a node's whole process tree (launcher, store, ranks) is killed.

The job must go on from the last checkpoint on the nodes that remain, node 0 included, take in a
launcher started again for a lost node, and leave nothing running.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil
import pytest

from ascendify.launch.ports import free_port
from tests.conftest import HANG_BOUND
from tests.launch.test_recover import RESUMABLE, assert_nothing_left
from tests.launch.test_run_multi_node import finish, launchers, start

pytestmark = pytest.mark.slow  # every test here starts processes
__all__ = ["launchers"]


def node_flags(node: int, port: int, tmp_path: Path, nnodes: str, logs: str = "") -> list[str]:
    """One loopback node of an elastic job: one rank, logs in ``logs<node><logs>``."""
    return [
        "ascendify", "run", "--nnodes", nnodes, "--node-rank", str(node),
        "--master-addr", "127.0.0.1", "--master-port", str(port),
        "--local-addr", f"127.0.0.{node + 1}", "--nproc-per-node", "1",
        "--log-dir", str(tmp_path / f"logs{node}{logs}"), "--join-timeout", "60",
        "--max-restarts", "3", sys.executable, str(RESUMABLE), f"--train_url={tmp_path / 'out'}",
    ]  # fmt: skip


def wait_for_line(
    log: Path, pattern: str, running: Sequence[subprocess.Popen[str]]
) -> re.Match[str]:
    """The first match of ``pattern`` in ``log``; a launcher of ``running`` that ends first
    fails the test with its output."""
    deadline = time.monotonic() + HANG_BOUND
    while True:
        found = re.search(pattern, log.read_text() if log.exists() else "")
        if found is not None:
            return found
        for launcher in running:
            if launcher.poll() is not None:
                _out, err = launcher.communicate()
                raise AssertionError(f"a launcher ended with {launcher.returncode}: {err}")
        assert time.monotonic() < deadline, f"{log} never showed {pattern!r}"
        time.sleep(0.05)


def kill_tree(launcher: subprocess.Popen[str]) -> None:
    """SIGKILL a node's launcher and every process below it at once, as a node dies."""
    root = psutil.Process(launcher.pid)
    for process in [root, *root.children(recursive=True)]:
        process.send_signal(signal.SIGKILL)
    launcher.wait()


def summary(tmp_path: Path, folder: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((tmp_path / folder / "run_summary.json").read_text())
    return data


def test_node_0s_tree_killed_the_job_finishes_on_node_1_from_the_last_checkpoint(
    tmp_path: Path, launchers: list[subprocess.Popen[str]]
) -> None:
    (tmp_path / "out").mkdir()
    port = free_port()
    env = {"PIDS_DIR": str(tmp_path), "STEPS": "30", "STEP_SECONDS": "0.2"}
    node0, node1 = (start(launchers, node_flags(n, port, tmp_path, "1:2"), env) for n in (0, 1))
    reached = wait_for_line(
        tmp_path / "logs1" / "rank_1.log", r"rank 1 step (\d+) ", [node0, node1]
    )
    kill_tree(node0)
    ((code, err),) = finish([node1])
    assert code == 0, err
    assert json.loads((tmp_path / "out" / "final.json").read_text())["attempt"] >= 1
    log = (tmp_path / "logs1" / "rank_0.log").read_text()  # node 1's rank is rank 0 now
    resumed = re.search(r"rank 0 attempt \d+ starts at step (\d+)", log)
    assert resumed is not None, log
    assert int(resumed.group(1)) >= int(reached.group(1))  # from the checkpoint, not from 0
    attempts = summary(tmp_path, "logs1")["attempts"]
    first, last = attempts[0], attempts[-1]
    assert first["membership"]["members"] == [0, 1]
    assert first["cause"] == "node" or "node 0" in first["reason"]
    assert last["membership"]["members"] == [1]
    assert last["membership"]["host"] == 1  # the store moved to node 1
    assert 0 in {node for a in attempts for node in a["membership"]["left"]}
    assert_nothing_left(tmp_path)


def test_three_nodes_two_to_three_go_on_without_a_lost_one_and_take_in_its_replacement(
    tmp_path: Path, launchers: list[subprocess.Popen[str]]
) -> None:
    (tmp_path / "out").mkdir()
    hold = tmp_path / "hold"
    hold.touch()  # the ranks wait before the last step until the replacement has joined
    port = free_port()
    env = {
        "PIDS_DIR": str(tmp_path), "STEPS": "12", "STEP_SECONDS": "0.2", "HOLD_FILE": str(hold),
    }  # fmt: skip
    nodes = [start(launchers, node_flags(n, port, tmp_path, "2:3"), env) for n in (0, 1, 2)]
    wait_for_line(tmp_path / "logs2" / "rank_2.log", r"rank 2 step 2 ", nodes)
    kill_tree(nodes[2])
    wait_for_line(tmp_path / "logs0" / "rank_0.log", r"attempt [1-9]\d* starts at step", nodes[:2])
    again = start(launchers, node_flags(2, port, tmp_path, "2:3", logs="again"), env)
    wait_for_line(
        tmp_path / "logs2again" / "rank_2.log", r"rank 2 attempt \d+ starts at step", [again]
    )
    hold.unlink()
    results = finish([nodes[0], nodes[1], again])
    assert [code for code, _err in results] == [0, 0, 0], results
    memberships = [a["membership"] for a in summary(tmp_path, "logs0")["attempts"]]
    assert memberships[0]["members"] == [0, 1, 2]
    shrunk = next(i for i, m in enumerate(memberships) if m["members"] == [0, 1])
    assert memberships[shrunk]["left"] == [2]
    assert memberships[-1]["members"] == [0, 1, 2]
    assert memberships[-1]["joined"] == [2]
    fresh = summary(tmp_path, "logs2again")["attempts"]
    assert [a["state"] for a in fresh] == ["succeeded"]  # taken in once, then ran to the end
    assert json.loads((tmp_path / "out" / "final.json").read_text())["value"] > 0
    assert_nothing_left(tmp_path)
