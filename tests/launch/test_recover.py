"""Restarts and hang detection with real processes: faults injected into a resumable gloo job.

Every job checkpoints into its train_url and resumes from it, so each must end with the value of
an uninterrupted run; no process of any attempt may outlive the launcher.
"""

from __future__ import annotations

import io
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ascendify.launch import LaunchOptions, hang, plan_node, resolve_spec
from ascendify.launch.agent import DUMPED, Agent
from ascendify.launch.plan import local_assignment
from ascendify.launch.ports import free_port
from tests.conftest import HANG_BOUND, RunCli
from tests.jobs.conftest import running
from tests.launch.test_run_multi_node import finish, flags_node, launchers, start

pytestmark = pytest.mark.slow  # every test here starts processes

FIXTURES = Path(__file__).parent / "fixtures"
RESUMABLE = FIXTURES / "resumable.py"
STEPS = 8
# Long enough that a busy machine's pauses between two lines of a healthy rank are no hang.
HANG_TIMEOUT = "5"
__all__ = ["launchers"]  # the fixture, shared with the multi-node tests


def uninterrupted(world: int) -> float:
    return world * (world + 1) / 2 * STEPS * (STEPS + 1) / 2


def waits_in(stack: str, call: str, script: Path = RESUMABLE) -> bool:
    """Whether a rank's stack shows it waiting in the script's line holding ``call``, or caught
    inside a garbage collection a gloo thread started (see :func:`waits_in_all_reduce`)."""
    waiting = f'File "{script}", line {line_of(call)} in main'
    return waiting in stack or "Garbage-collecting" in stack


def waits_in_all_reduce(stack: str, script: Path = RESUMABLE) -> bool:
    """Whether a rank's stack shows it waiting in the script's all_reduce. Now and then (about
    once in ten runs under load) such a rank is caught, twice running, inside a garbage collection
    that a gloo thread started, and faulthandler shows no Python frame of it."""
    return waits_in(stack, "dist.all_reduce(total)", script)


def line_of(text: str) -> int:
    """The line of the resumable script that holds ``text``."""
    lines = RESUMABLE.read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def run_resumable(
    run_cli: RunCli, tmp_path: Path, fault: str, *flags: str, faulty_attempts: int = 1
) -> tuple[Any, dict[str, Any]]:
    out = tmp_path / "out"
    out.mkdir()
    result = run_cli(
        [
            "run", "--nproc-per-node", "2", "--log-dir", str(tmp_path / "logs"), *flags,
            sys.executable, str(RESUMABLE), f"--train_url={out}",
        ],
        cwd=tmp_path,
        env={"FAULT": fault, "FAULT_ATTEMPTS": str(faulty_attempts), "PIDS_DIR": str(tmp_path)},
        timeout=HANG_BOUND,
    )  # fmt: skip
    summary = json.loads((tmp_path / "logs" / "run_summary.json").read_text())
    return result, summary


def final_value(out: Path) -> float:
    return float(json.loads((out / "final.json").read_text())["value"])


def assert_nothing_left(folder: Path) -> None:
    pids = [int(pid) for path in folder.glob("pids_*") for pid in path.read_text().split()]
    assert pids, "no rank started"
    left = running(pids)
    assert left == [], f"processes of the job outlived it: {left}"


def test_rank_exit_at_step_5_restarts_and_ends_as_an_uninterrupted_run(
    run_cli: RunCli, tmp_path: Path
) -> None:
    result, summary = run_resumable(
        run_cli, tmp_path, "exit", "--max_restarts", "1", "--resume-from-latest", "ckpt*.json"
    )
    assert result.returncode == 0, result.stderr
    assert final_value(tmp_path / "out") == uninterrupted(2)
    attempts = summary["attempts"]
    assert [a["cause"] for a in attempts] == ["exit", None]
    assert attempts[0]["exit_codes"]["1"] == 3
    assert "rank 1 (node 0, local rank 1" in attempts[0]["reason"]
    assert attempts[0]["end"] <= attempts[1]["start"]
    # The console says why (as the job's page does): the rank, its exit code, its error.
    assert "attempt 0 ended (exit): rank 1 exited with 3, rank 1 (node 0, local rank 1" in (
        result.stderr
    )
    assert "; restart 1 of 1" in result.stderr
    # The second attempt resumed from the checkpoint, handed over as --resume= too.
    assert f"rank 1 attempt 1 starts at step 4 from {tmp_path / 'out' / 'ckpt.json'}" in (
        result.stdout
    )
    log = (tmp_path / "logs" / "rank_1.log").read_text()
    assert "rank 1 attempt 0 starts" in log
    assert "[ascendify] restart 1\n" in log
    assert_nothing_left(tmp_path)


@pytest.mark.parametrize(("max_restarts", "succeeds"), [(2, True), (1, False)])
def test_sigkilled_rank_with_n_and_n_minus_1_restarts(
    run_cli: RunCli, tmp_path: Path, max_restarts: int, succeeds: bool
) -> None:
    result, summary = run_resumable(
        run_cli, tmp_path, "kill", "--max-restarts", str(max_restarts), faulty_attempts=2
    )
    attempts = summary["attempts"]
    if succeeds:
        assert result.returncode == 0, result.stderr
        assert final_value(tmp_path / "out") == uninterrupted(2)
        assert [a["cause"] for a in attempts] == ["exit", "exit", None]
    else:
        assert result.returncode == 128 + signal.SIGKILL  # the last cause
        assert "killed by signal SIGKILL" in result.stderr
        assert [a["exit_codes"]["1"] for a in attempts] == [-9, -9]
        assert summary["state"] == "failed"
    assert_nothing_left(tmp_path)


def test_no_restarts_keeps_the_single_attempt_behaviour(run_cli: RunCli, tmp_path: Path) -> None:
    result, summary = run_resumable(run_cli, tmp_path, "exit")
    assert result.returncode == 3
    assert "attempt 0 ended (exit)" not in result.stderr
    assert [a["cause"] for a in summary["attempts"]] == ["exit"]
    assert summary["root_cause"]["rank"] == 1
    assert not (tmp_path / "out" / "final.json").exists()
    assert_nothing_left(tmp_path)


@pytest.mark.parametrize(
    ("fault", "rank_1_waits_in"),
    [
        ("collective", ["dist.recv(torch.zeros(1), src=0)"]),
        ("loader", ["batch = next(batches)", "time.sleep(3600)"]),  # the worker's stack comes too
    ],
)
def test_hang_is_found_with_every_rank_stack_and_restarted(
    run_cli: RunCli, tmp_path: Path, fault: str, rank_1_waits_in: list[str]
) -> None:
    result, summary = run_resumable(
        run_cli, tmp_path, fault, "--hang-timeout", HANG_TIMEOUT, "--max-restarts", "1"
    )
    assert result.returncode == 0, result.stderr
    assert final_value(tmp_path / "out") == uninterrupted(2)
    hang, resumed = summary["attempts"]
    assert hang["cause"] == "hang"
    assert resumed["cause"] is None
    assert f"no rank of the job wrote a line for {HANG_TIMEOUT}s" in hang["reason"]
    script = str(RESUMABLE)
    assert waits_in_all_reduce(hang["stacks"]["0"]), hang["stacks"]["0"]
    for waits in rank_1_waits_in:
        where = "__getitem__" if "sleep" in waits else "main"
        assert f'File "{script}", line {line_of(waits)} in {where}' in hang["stacks"]["1"]
    assert (
        "[ascendify] hang: the stacks of rank 0" in (tmp_path / "logs" / "rank_0.log").read_text()
    )
    assert_nothing_left(tmp_path)


def _node_flags(node: int, port: int, tmp_path: Path, *extra: str) -> list[str]:
    out = tmp_path / "out"
    return [*flags_node(node, port, tmp_path, str(RESUMABLE), *extra), f"--train_url={out}"]


def _summary(tmp_path: Path, node: int) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((tmp_path / f"logs{node}" / "run_summary.json").read_text())
    return data


def _two_nodes_with_a_fault(
    tmp_path: Path, launchers: list[Any], fault: str, rank: int, *flags: str, **env: str
) -> list[tuple[int, str]]:
    """Both nodes' launchers with one restart, ``rank`` faulty: how each ended."""
    (tmp_path / "out").mkdir()
    port = free_port()
    env = {"FAULT": fault, "FAULT_RANK": str(rank), "PIDS_DIR": str(tmp_path), **env}
    flags = ("--max-restarts", "1", *flags)
    nodes = [start(launchers, _node_flags(n, port, tmp_path, *flags), env) for n in (0, 1)]
    return finish(nodes, timeout=HANG_BOUND)


def test_two_nodes_restart_together_after_a_rank_of_node_1_exits(
    tmp_path: Path, launchers: list[Any]
) -> None:
    results = _two_nodes_with_a_fault(tmp_path, launchers, "exit", rank=3)
    assert [code for code, _err in results] == [0, 0], results
    assert final_value(tmp_path / "out") == uninterrupted(4)
    for node in (0, 1):
        attempts = _summary(tmp_path, node)["attempts"]
        assert [a["attempt"] for a in attempts] == [0, 1]
        assert [a["cause"] for a in attempts] == ["exit", None]
    assert _summary(tmp_path, 1)["attempts"][0]["exit_codes"]["3"] == 3
    assert_nothing_left(tmp_path)


def test_a_rank_failing_after_the_other_node_ended_restarts_both(
    tmp_path: Path, launchers: list[Any]
) -> None:
    results = _two_nodes_with_a_fault(tmp_path, launchers, "late", rank=0)
    assert [code for code, _err in results] == [0, 0], results
    assert final_value(tmp_path / "out") == uninterrupted(4)
    node_1 = _summary(tmp_path, 1)["attempts"]
    assert [(a["state"], a["cause"]) for a in node_1] == [("stopped", "exit"), ("succeeded", None)]
    assert node_1[0]["exit_codes"] == {"2": 0, "3": 0}  # its ranks had ended well
    assert_nothing_left(tmp_path)


def _node_1_killed_at_step_2(
    tmp_path: Path, launchers: list[Any]
) -> tuple[Any, Callable[[int], list[str]], dict[str, str]]:
    """Two nodes with one restart, node 1's launcher SIGKILLed (its ranks die with it) once its
    ranks are at step 2; node 0's launcher, the flags of node N and the environment."""
    (tmp_path / "out").mkdir()
    port = free_port()
    env = {"PIDS_DIR": str(tmp_path), "STEP_SECONDS": "0.4"}

    def flags(node: int) -> list[str]:
        return _node_flags(node, port, tmp_path, "--max-restarts", "1")

    node0, node1 = start(launchers, flags(0), env), start(launchers, flags(1), env)
    log = tmp_path / "logs1" / "rank_3.log"
    deadline = time.monotonic() + HANG_BOUND
    while "step 2 " not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline, "node 1's ranks never got to step 2"
        time.sleep(0.05)
    node1.send_signal(signal.SIGKILL)
    node1.wait()
    return node0, flags, env


def test_a_lost_node_agent_started_afresh_joins_the_next_attempt(
    tmp_path: Path, launchers: list[Any]
) -> None:
    node0, flags, env = _node_1_killed_at_step_2(tmp_path, launchers)
    again = start(launchers, flags(1), env)  # as a platform starts a lost node again
    results = finish([node0, again], timeout=HANG_BOUND)
    assert [code for code, _err in results] == [0, 0], results
    assert final_value(tmp_path / "out") == uninterrupted(4)
    first, second = _summary(tmp_path, 0)["attempts"]
    assert first["cause"] in ("exit", "node")
    assert second["cause"] is None
    assert [a["attempt"] for a in _summary(tmp_path, 1)["attempts"]] == [1]  # the fresh node
    assert "rank 3 attempt 1 starts at step" in (tmp_path / "logs1" / "rank_3.log").read_text()
    assert_nothing_left(tmp_path)


def test_a_stop_while_waiting_for_a_lost_node_ends_the_job_at_once(
    tmp_path: Path, launchers: list[Any]
) -> None:
    node0, _flags, _env = _node_1_killed_at_step_2(tmp_path, launchers)  # nobody restarts it
    summary = tmp_path / "logs0" / "run_summary.json"
    deadline = time.monotonic() + HANG_BOUND
    while "attempts" not in (summary.read_text() if summary.exists() else ""):
        assert time.monotonic() < deadline, "node 0 never ended its first attempt"
        time.sleep(0.05)
    node0.send_signal(signal.SIGTERM)  # node 0 waits for node 1 to join the next attempt
    ((code, err),) = finish([node0], timeout=HANG_BOUND)
    assert code == 128 + signal.SIGTERM, err
    assert "stopped by SIGTERM before attempt 1 started; no rank was running" in err
    assert_nothing_left(tmp_path)


def test_a_hang_on_two_nodes_takes_every_rank_stack_and_restarts(
    tmp_path: Path, launchers: list[Any]
) -> None:
    # Node 1's ranks print only their first line: node 0's output keeps the whole job alive
    # (through the store) until rank 3 blocks in a receive and every rank waits.
    flags = ("--hang-timeout", HANG_TIMEOUT)
    results = _two_nodes_with_a_fault(
        tmp_path, launchers, "collective", 3, *flags, QUIET_RANKS="2,3", STEP_SECONDS="1",
        FAULT_STEP="8",  # node 1 is silent for 7 s, longer than the hang timeout, before it
    )  # fmt: skip
    assert [code for code, _err in results] == [0, 0], results
    assert final_value(tmp_path / "out") == uninterrupted(4)
    stacks: dict[str, str] = {}
    for node in (0, 1):
        hang, resumed = _summary(tmp_path, node)["attempts"]
        assert (hang["cause"], resumed["cause"]) == ("hang", None)
        stacks.update(hang["stacks"])
    assert sorted(stacks) == ["0", "1", "2", "3"]
    for rank in "012":
        assert waits_in_all_reduce(stacks[rank]), stacks[rank]
    assert waits_in(stacks["3"], "dist.recv(torch.zeros(1), src=0)"), stacks["3"]
    assert_nothing_left(tmp_path)


def test_resume_glob_in_a_folder_linking_to_itself_starts_the_attempt_at_once(
    run_cli: RunCli, tmp_path: Path
) -> None:
    # A script's latest -> . and best -> . in its output folder: '**/*.pt' walked them without
    # end and the attempt never started; folders and empty files were handed over too.
    out = tmp_path / "out"
    (out / "step-2").mkdir(parents=True)
    (out / "step-2" / "model.pt").write_bytes(b"weights")
    (out / "latest").symlink_to(".")
    (out / "best").symlink_to(".")
    (out / "empty.pt").touch()
    (out / "folder.pt").mkdir()
    result = run_cli(
        [
            "run", "--log-dir", str(tmp_path / "logs"), "--resume-from-latest", "**/*.pt",
            sys.executable, "-c", "import sys; print('args', sys.argv[1:])", f"--train_url={out}",
        ],
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    resume = f"--resume={out / 'step-2' / 'model.pt'}"
    assert f"args ['--train_url={out}', '{resume}']" in result.stdout
    assert f"attempt 0: {resume}" in result.stderr


QUIET = FIXTURES / "quiet.py"


def run_quiet(
    run_cli: RunCli, tmp_path: Path, mode: str, *flags: str, **env: str
) -> tuple[Any, dict[str, Any]]:
    """The quiet fixture on two ranks with ``--hang-timeout 6``."""
    out = tmp_path / "out"
    out.mkdir()
    result = run_cli(
        [
            "run", "--nproc-per-node", "2", "--log-dir", str(tmp_path / "logs"), "--hang-timeout",
            "6", "--grace-period", "2", *flags, sys.executable, str(QUIET), f"--train_url={out}",
        ],
        cwd=tmp_path,
        env={"MODE": mode, **env},
    )  # fmt: skip
    summary = json.loads((tmp_path / "logs" / "run_summary.json").read_text())
    return result, summary


def test_a_silent_20s_checkpoint_save_is_busy_not_hung(run_cli: RunCli, tmp_path: Path) -> None:
    result, summary = run_quiet(run_cli, tmp_path, "save", SECONDS_SILENT="20")
    assert result.returncode == 0, result.stderr
    assert summary["state"] == "succeeded"
    assert "rank 0 done" in result.stdout
    # Silent for over twice the timeout: the launcher says why it did not stop the job.
    assert "rank 0 has printed nothing for " in result.stderr, result.stderr
    assert "(--hang-timeout 6) but is busy (it read " in result.stderr


def test_a_tight_one_line_loop_is_busy_not_hung(run_cli: RunCli, tmp_path: Path) -> None:
    # its stack is at the same line in every sample: its main thread's CPU time says it computes
    result, summary = run_quiet(run_cli, tmp_path, "spin", SECONDS_SILENT="20")
    assert result.returncode == 0, result.stderr
    assert summary["state"] == "succeeded"
    assert "rank 0 done" in result.stdout
    assert "(--hang-timeout 6) but is busy (its main thread computed " in result.stderr


def test_a_rank_blocked_on_a_lock_is_a_hang_with_its_stack(run_cli: RunCli, tmp_path: Path) -> None:
    result, summary = run_quiet(run_cli, tmp_path, "lock")
    assert result.returncode == 124, result.stderr
    assert summary["root_cause"]["cause"] == "hang"
    assert "none made progress (no I/O, no computing, the same Python stacks)" in result.stderr
    line = next(
        n for n, text in enumerate(QUIET.read_text().splitlines(), 1) if "# blocks forever" in text
    )
    assert f'File "{QUIET}", line {line} in block_on_a_lock' in summary["stacks"]["0"]


def test_a_heartbeat_keeps_a_silent_rank_alive(run_cli: RunCli, tmp_path: Path) -> None:
    result, _summary = run_quiet(run_cli, tmp_path, "heartbeat", SECONDS_SILENT="15")
    assert result.returncode == 0, result.stderr
    assert "rank 0 done" in result.stdout
    assert (tmp_path / "logs" / "heartbeats" / "attempt_0" / "rank_0").exists()


def test_a_rank_that_dropped_the_dump_handler_is_not_killed_by_it(
    run_cli: RunCli, tmp_path: Path
) -> None:
    # SIGUSR1 ends a process that no longer catches it: it is not sent, and the stack says why.
    result, summary = run_quiet(run_cli, tmp_path, "unhooked")
    assert result.returncode == 124, result.stderr
    assert "no longer catches SIGUSR1" in summary["stacks"]["0"]
    assert summary["ranks"]["0"]["signal"] != "SIGUSR1"
    assert summary["ranks"]["0"]["stopped_by_launcher"] is True


def test_a_killed_attempts_half_written_file_is_never_handed_over(
    run_cli: RunCli, tmp_path: Path
) -> None:
    result, summary = run_quiet(
        run_cli, tmp_path, "torn", "--max-restarts", "1", "--resume-from-latest", "ckpt-*.pt"
    )
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out"
    assert [a["cause"] for a in summary["attempts"]] == ["exit", None]
    assert f"rank 0 attempt 1 starts, resume={out / 'ckpt-1.pt'}" in result.stdout
    # Open for writing when the teardown began, or written during it: either way, skipped.
    skipped = f"attempt 1: --resume-from-latest skipped {out / 'ckpt-2.pt'}: "
    assert skipped + STOPPED_WRITING in result.stderr or skipped + WRITTEN_WHILE in result.stderr, (
        result.stderr
    )


STOPPED_WRITING = (
    "open for writing by a process of attempt 0 when its ranks were stopped, and not written since"
)
WRITTEN_WHILE = "written while attempt 0's ranks were being stopped"


def test_a_stop_during_a_failed_attempts_teardown_ends_the_job(
    tmp_path: Path, launchers: list[Any]
) -> None:
    # Rank 1 fails, rank 0 ignores SIGTERM: the teardown waits the grace period, and a SIGTERM
    # then must end the job, not start attempt 1.
    out = tmp_path / "out"
    out.mkdir()
    argv = [
        "ascendify", "run", "--nproc-per-node", "2", "--log-dir", str(tmp_path / "logs"),
        "--max-restarts", "1", "--grace-period", "5", sys.executable, str(QUIET),
        f"--train_url={out}",
    ]  # fmt: skip
    launcher = start(launchers, argv, {"MODE": "stubborn"})
    deadline = time.monotonic() + HANG_BOUND
    while not (out / "failing").exists():
        assert time.monotonic() < deadline, "rank 1 never got to fail"
        time.sleep(0.05)
    time.sleep(1)  # the launcher has seen rank 1 end and waits for rank 0
    launcher.send_signal(signal.SIGTERM)
    ((code, err),) = finish([launcher], timeout=HANG_BOUND)
    assert code == 128 + signal.SIGTERM, err
    assert "stopped by SIGTERM before attempt 1 started; no rank was running" in err
    assert "restart 1 of 1" not in err
    summary = json.loads((tmp_path / "logs" / "run_summary.json").read_text())
    assert [a["cause"] for a in summary["attempts"]] == ["exit"]


def test_a_rank_ended_by_the_stack_dump_signal_is_named_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A process that drops the handler just after the launcher looked (made certain here by
    # taking every process for one that catches it) dies of SIGUSR1: that is the launcher's
    # doing, not a crash of the rank's own.
    monkeypatch.setattr(hang, "_catches", lambda _pid: True)
    options = LaunchOptions(
        command=(sys.executable, str(QUIET)), log_dir=tmp_path / "logs", hang_timeout=2
    )
    spec = resolve_spec(options, {**os.environ, "MODE": "unhooked"})
    result = Agent(plan_node(spec, local_assignment(spec, free_port())), console=io.BytesIO()).run()
    assert result.exit_codes == {0: -signal.SIGUSR1}
    assert result.root_cause is not None
    assert result.root_cause.error == DUMPED
    report = result.root_cause.describe()
    assert "killed by signal SIGUSR1" in report
    assert f"error: {DUMPED}" in report
