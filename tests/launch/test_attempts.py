"""Restarts and hang detection, the pure parts: which attempts follow, what each attempt's ranks get."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ascendify.errors import AscendifyError
from ascendify.launch import LaunchOptions, plan_node, resolve_spec
from ascendify.launch.attempts import latest_checkpoint
from ascendify.launch.hang import START_ALLOWANCE, Silence
from ascendify.launch.plan import local_assignment
from ascendify.launch.restart import restarts
from ascendify.launch.starthook import FOLDER, STACKS_VARIABLE

PATH = {"PATH": os.environ["PATH"], "PYTHONPATH": "/user/lib"}


@pytest.mark.parametrize(
    ("state", "cause", "attempt", "expected"),
    [
        ("failed", "exit", 0, True),
        ("stopped", "exit", 0, True),  # another node's rank failed
        ("failed", "hang", 1, True),
        ("failed", "node", 0, True),
        ("failed", "exit", 2, False),  # the last allowed attempt
        ("failed", "start", 0, False),  # the command cannot start: again would not help
        ("stopped", "stopped", 0, False),  # a launcher was stopped by a signal
        ("interrupted", "exit", 0, False),
    ],
)
def test_which_endings_restart(state: str, cause: str, attempt: int, expected: bool) -> None:
    assert restarts(state, cause, attempt, max_restarts=2) is expected


def test_a_success_never_restarts() -> None:
    assert not restarts("succeeded", None, 0, max_restarts=3)


def test_each_attempt_tells_its_ranks_its_number_and_arms_the_start_hook(tmp_path: Path) -> None:
    options = LaunchOptions(
        command=("python", "t.py"), nproc_per_node="2", log_dir=tmp_path, max_restarts=3,
        hang_timeout=15,
    )  # fmt: skip
    spec = resolve_spec(options, PATH)
    plan = plan_node(spec, local_assignment(spec, 1), attempt=2, resume=tmp_path / "c.pt")
    env = plan.workers[1].env
    assert env["ASCENDIFY_RESTART_COUNT"] == env["TORCHELASTIC_RESTART_COUNT"] == "2"
    assert env["TORCHELASTIC_MAX_RESTARTS"] == "3"
    assert env["PYTHONPATH"] == f"{FOLDER}{os.pathsep}/user/lib"  # the user's path stays
    assert env[STACKS_VARIABLE] == str(tmp_path / "stacks" / "attempt_2")
    assert plan.workers[0].argv == ("python", "t.py", f"--resume={tmp_path / 'c.pt'}")
    assert (plan.attempt, plan.hang_timeout) == (2, 15)


def test_without_a_hang_timeout_the_ranks_python_path_is_untouched(tmp_path: Path) -> None:
    spec = resolve_spec(LaunchOptions(command=("python", "t.py"), log_dir=tmp_path), PATH)
    env = plan_node(spec, local_assignment(spec, 1)).workers[0].env
    assert "PYTHONPATH" not in env
    assert STACKS_VARIABLE not in env
    assert env["ASCENDIFY_RESTART_COUNT"] == "0"


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("max_restarts", -1, "--max-restarts must be from 0 to 1000, got -1"),
        ("hang_timeout", -1.0, "--hang-timeout must be a number of seconds from 0"),
        ("hang_timeout", float("nan"), "--hang-timeout must be a number of seconds from 0"),
    ],
)
def test_bad_recovery_values_are_refused(flag: str, value: float, message: str) -> None:
    options = LaunchOptions(command=("python", "t.py"), **{flag: value})
    with pytest.raises(AscendifyError, match=message):
        resolve_spec(options, PATH)


def test_latest_checkpoint_is_the_newest_match_inside_the_output_folder(tmp_path: Path) -> None:
    assert latest_checkpoint("ckpt-*.pt", tmp_path) is None
    for age, name in enumerate(["ckpt-9.pt", "ckpt-10.pt", "other.pt"]):
        path = tmp_path / name
        path.write_text("")
        os.utime(path, (1000 + age, 1000 + age))
    assert latest_checkpoint("ckpt-*.pt", tmp_path) == tmp_path / "ckpt-10.pt"
    assert latest_checkpoint(str(tmp_path / "*.pt"), Path("/elsewhere")) == tmp_path / "other.pt"
    assert latest_checkpoint(None, tmp_path) is None


def test_silence_counts_from_the_last_output_with_room_to_start() -> None:
    silence = Silence(timeout=5)
    start = silence.last
    assert not silence.hung(start + 5)  # nothing printed yet: starting takes its time
    assert silence.hung(start + START_ALLOWANCE + 0.01)
    silence.output()
    assert not silence.hung(silence.last + 4.9)
    assert silence.hung(silence.last + 5.01)
    silence.job_output(7)  # another node's ranks wrote: life
    assert not silence.hung(silence.last + 4.9)
    assert not Silence(timeout=0).hung(start + 10**6)
