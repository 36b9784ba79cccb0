"""Save now through the frameworks' own save paths, with real processes and no edit of the
program: a Trainer run and an accelerate loop, stopped mid-run the way a job is stopped (SIGTERM
to ``ascendify run``), save where they stopped; the Trainer resumes from its checkpoint."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import needs
from tests.launch.test_elastic import wait_for_line
from tests.launch.test_launchers_run import FRAMEWORKS, TRAINER_TRAIN
from tests.launch.test_run_multi_node import finish, launchers, start

pytestmark = pytest.mark.slow  # every test here starts processes
__all__ = ["launchers"]

ACCELERATE_CHECK_TRIGGER = FRAMEWORKS / "accelerate_check_trigger.py"


def ascendify_run(tmp_path: Path, logs: str, nproc: int, script: Path) -> list[str]:
    return [
        "ascendify", "run", "--nproc-per-node", str(nproc), "--log-dir", str(tmp_path / logs),
        "--grace-period", "120", sys.executable, str(script),
    ]  # fmt: skip


def stop(launcher: subprocess.Popen[str]) -> None:
    """Stop the run as a job is stopped: SIGTERM to the launcher, which asks its ranks to save."""
    launcher.send_signal(signal.SIGTERM)
    finish([launcher])


def printed_steps(log: Path, pattern: str = r"^step (\d+)$") -> list[int]:
    return [int(step) for step in re.findall(pattern, log.read_text(), re.MULTILINE)]


@needs("transformers")
def test_a_trainer_stopped_mid_run_saves_where_it_stopped_and_resumes_there(
    tmp_path: Path, launchers: list[subprocess.Popen[str]]
) -> None:
    """Two ranks: both stop after the same step, the one the checkpoint holds."""
    out = tmp_path / "out"
    env = {"OUTPUT_DIR": str(out), "MAX_STEPS": "100000", "STEP_SECONDS": "0.1"}
    launcher = start(launchers, ascendify_run(tmp_path, "logs", 2, TRAINER_TRAIN), env)
    logs = [tmp_path / "logs" / f"rank_{rank}.log" for rank in (0, 1)]
    reached = int(wait_for_line(logs[0], r"(?m)^step ([3-9]|\d\d+)$", [launcher]).group(1))
    stop(launcher)
    last = printed_steps(logs[0])[-1]
    assert last >= reached
    assert printed_steps(logs[1])[-1] == last  # no rank went a step further
    # The Trainer's own checkpoint, of the last step done: nothing done is lost.
    assert [path.name for path in out.glob("checkpoint-*")] == [f"checkpoint-{last}"], logs[
        0
    ].read_text()
    state = json.loads((out / f"checkpoint-{last}" / "trainer_state.json").read_text())
    assert state["global_step"] == last
    for log in logs:
        assert f"ascendify: saved step {last} when asked; exiting" in log.read_text()

    resumed_env = {**env, "MAX_STEPS": str(last + 2), "STEP_SECONDS": "0.01", "RESUME": "1"}
    again = start(launchers, ascendify_run(tmp_path, "logs2", 2, TRAINER_TRAIN), resumed_env)
    ((code, err),) = finish([again])
    assert code == 0, err
    assert printed_steps(tmp_path / "logs2" / "rank_0.log") == [last + 1, last + 2]


@needs("transformers")
def test_a_request_that_reaches_one_trainer_rank_stops_every_rank_after_the_same_step(
    tmp_path: Path, launchers: list[subprocess.Popen[str]]
) -> None:
    """Only rank 1's save-now file, no signal: the ranks agree, so rank 0 saves and stops with
    it instead of waiting in the next step's all-reduce for a rank that has gone."""
    out = tmp_path / "out"
    env = {"OUTPUT_DIR": str(out), "MAX_STEPS": "100000", "STEP_SECONDS": "0.1"}
    launcher = start(launchers, ascendify_run(tmp_path, "logs", 2, TRAINER_TRAIN), env)
    logs = [tmp_path / "logs" / f"rank_{rank}.log" for rank in (0, 1)]
    wait_for_line(logs[1], r"(?m)^step 3$", [launcher])
    asked = tmp_path / "logs" / "save_now" / "attempt_0" / "rank_1"
    asked.parent.mkdir(parents=True, exist_ok=True)
    asked.touch()
    ((code, err),) = finish([launcher])
    assert code == 0, err  # every rank saved and exited: the run ended as finished
    last = printed_steps(logs[1])[-1]
    assert printed_steps(logs[0])[-1] == last
    assert [path.name for path in out.glob("checkpoint-*")] == [f"checkpoint-{last}"]


@needs("accelerate")
def test_an_accelerate_loop_that_checks_its_trigger_saves_on_every_rank_after_one_step(
    tmp_path: Path, launchers: list[subprocess.Popen[str]]
) -> None:
    out = tmp_path / "out"
    env = {"OUTPUT_DIR": str(out), "STEP_SECONDS": "0.05"}
    launcher = start(launchers, ascendify_run(tmp_path, "logs", 2, ACCELERATE_CHECK_TRIGGER), env)
    logs = [tmp_path / "logs" / f"rank_{rank}.log" for rank in (0, 1)]
    wait_for_line(logs[1], r"rank 1 step 3\b", [launcher])
    stop(launcher)
    saved = [printed_steps(log, rf"rank {rank} saved step (\d+)") for rank, log in enumerate(logs)]
    (step,) = saved[0]
    assert saved[1] == [step]  # the same step on both ranks
    for rank, log in enumerate(logs):
        assert printed_steps(log, rf"rank {rank} step (\d+)")[-1] == step  # none after it
    assert [path.name for path in out.iterdir()] == [f"step_{step}"]
    assert any((out / f"step_{step}").iterdir())
