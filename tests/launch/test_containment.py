"""Nothing of a job outlives it: ranks die with a SIGKILLed launcher, escaped children are swept."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.conftest import HANG_BOUND, RunCli, ascendify_env

FIXTURES = Path(__file__).parent / "fixtures"
ESCAPES = str(FIXTURES / "escapes.py")

pytestmark = pytest.mark.slow


def wait_for_pids(out: Path, ranks: int, timeout: float = HANG_BOUND) -> dict[int, list[int]]:
    deadline = time.monotonic() + timeout
    while True:
        files = list(out.glob("pids_*"))
        if len(files) == ranks and all(f.read_text().count(" ") == 2 for f in files):
            return {int(f.stem[5:]): [int(p) for p in f.read_text().split()] for f in files}
        if time.monotonic() >= deadline:
            raise AssertionError(f"the ranks did not start: {sorted(out.iterdir())}")
        time.sleep(0.05)


def alive(pids: list[int]) -> list[int]:
    living = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                living.append(pid)
        except psutil.NoSuchProcess:
            continue
    return living


def gone_within(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive(pids)


def kill_all(pids: list[int]) -> None:
    for pid in alive(pids):  # a failing test must not leave sleepers behind
        psutil.Process(pid).kill()


def test_nothing_outlives_a_sigkilled_launcher(tmp_path: Path) -> None:
    launcher = subprocess.Popen(
        [sys.executable, "-m", "ascendify", "run", "--nproc-per-node", "2", "--grace-period",
         "2", "--log-dir", str(tmp_path / "logs"), "python", ESCAPES],
        env=ascendify_env({"PROBE_OUT": str(tmp_path)}),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        pids = wait_for_pids(tmp_path, 2)
        time.sleep(1.0)  # the launcher has recorded what the ranks started
        helpers = [p.pid for p in psutil.Process(launcher.pid).children()]  # ranks + watchdog
    finally:
        launcher.kill()  # no handler, no teardown
        launcher.wait()
    everyone = [pid for triple in pids.values() for pid in triple]
    try:
        assert gone_within([pids[rank][0] for rank in pids], 3) == []  # the kernel's doing
        # The setsid children and double-forked grandchildren: the watchdog's.
        assert gone_within(everyone + helpers, 8) == []
    finally:
        kill_all(everyone)


def test_the_watchdog_ends_with_a_normal_run(tmp_path: Path) -> None:
    launcher = subprocess.Popen(
        [sys.executable, "-m", "ascendify", "run", "--nproc-per-node", "1",
         "--log-dir", str(tmp_path / "logs"), "python", "-c",
         "import pathlib, time; pathlib.Path('started').touch(); time.sleep(1)"],
        env=ascendify_env(),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    deadline = time.monotonic() + HANG_BOUND
    while not (tmp_path / "started").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    helpers = [p.pid for p in psutil.Process(launcher.pid).children()]
    _out, err = launcher.communicate(timeout=HANG_BOUND)
    assert launcher.returncode == 0, err
    assert len(helpers) == 2  # the rank and the watchdog
    assert gone_within(helpers, 5) == []
    assert "Warning" not in err


def test_children_that_left_the_rank_session_are_swept(run_cli: RunCli, tmp_path: Path) -> None:
    result = run_cli(
        ["run", "--nproc-per-node", "2", "--log-dir", str(tmp_path / "logs"), "python", ESCAPES],
        env={"PROBE_OUT": str(tmp_path), "FAIL_RANK": "0", "FAIL_AFTER": "1.5"},
        timeout=HANG_BOUND,
    )
    pids = wait_for_pids(tmp_path, 2, timeout=0)
    everyone = [pid for triple in pids.values() for pid in triple]
    try:
        assert result.returncode == 3, result.stderr
        # The double-forked grandchildren were never descendants of a rank at teardown.
        assert alive(everyone) == []
    finally:
        kill_all(everyone)


def test_summary_records_the_real_exit_code_or_signal_of_every_rank(
    run_cli: RunCli, tmp_path: Path
) -> None:
    script = tmp_path / "ranks.py"
    script.write_text(
        "import os, signal, sys, time\n"
        "rank = int(os.environ['RANK'])\n"
        "exits = {1: 7, 2: 0}  # on SIGTERM; rank 3 keeps the default (killed by it)\n"
        "if rank in exits:\n"
        "    signal.signal(signal.SIGTERM, lambda *_: sys.exit(exits[rank]))\n"
        "open(f'ready_{rank}', 'w').close()\n"
        "if rank == 0:\n"
        "    while len([n for n in os.listdir('.') if n.startswith('ready_')]) < 4:\n"
        "        time.sleep(0.05)\n"
        "    sys.exit(5)\n"
        "time.sleep(120)\n"
    )
    logs = tmp_path / "logs"
    result = run_cli(
        ["run", "--nproc-per-node", "4", "--log-dir", str(logs), "python", str(script)],
        cwd=tmp_path,
        timeout=HANG_BOUND,
    )
    assert result.returncode == 5, result.stderr
    summary = json.loads((logs / "run_summary.json").read_text())
    assert summary["exit_codes"] == {"0": 5, "1": 7, "2": 0, "3": -signal.SIGTERM}
    ranks = summary["ranks"]
    assert ranks["0"] == {
        "exit_code": 5, "signal": None, "started": True, "stopped_by_launcher": False,
    }  # fmt: skip
    assert ranks["1"]["exit_code"] == 7
    assert ranks["2"] == {
        "exit_code": 0, "signal": None, "started": True, "stopped_by_launcher": True,
    }  # fmt: skip
    assert ranks["3"]["signal"] == "SIGTERM"
    assert [ranks[r]["stopped_by_launcher"] for r in "0123"] == [False, True, True, True]
