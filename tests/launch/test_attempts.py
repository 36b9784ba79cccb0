"""Restarts and hang detection, the pure parts: which attempts follow, what each attempt's ranks get."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from ascendify.errors import AscendifyError
from ascendify.heartbeat import HEARTBEAT_VARIABLE, heartbeat
from ascendify.launch import LaunchOptions, plan_node, resolve_spec, resume
from ascendify.launch.hang import START_ALLOWANCE, Moved, Silence, stack_change
from ascendify.launch.plan import local_assignment
from ascendify.launch.restart import restarts
from ascendify.launch.resume import StoppedAttempt, latest_checkpoint
from ascendify.launch.starthook import FOLDER, STACKS_VARIABLE

PATH = {"PATH": os.environ["PATH"], "PYTHONPATH": "/user/lib"}


@pytest.mark.parametrize(
    ("state", "cause", "attempt", "expected"),
    [
        ("failed", "exit", 0, True),
        ("stopped", "exit", 0, True),  # another node's rank failed
        ("failed", "hang", 1, True),
        ("failed", "node", 0, True),
        ("stopped", "join", 0, True),  # a node asks to join an elastic job
        ("stopped", "join", 2, False),
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
    assert env[HEARTBEAT_VARIABLE] == str(tmp_path / "heartbeats" / "attempt_2" / "rank_1")
    assert plan.workers[0].argv == ("python", "t.py", f"--resume={tmp_path / 'c.pt'}")
    assert (plan.attempt, plan.hang_timeout) == (2, 15)


def test_without_a_hang_timeout_the_start_hook_only_hooks_save_now(tmp_path: Path) -> None:
    spec = resolve_spec(LaunchOptions(command=("python", "t.py"), log_dir=tmp_path), PATH)
    env = plan_node(spec, local_assignment(spec, 1)).workers[0].env
    assert env["PYTHONPATH"] == f"{FOLDER}{os.pathsep}/user/lib"  # save now in Trainer, accelerate
    assert STACKS_VARIABLE not in env
    assert HEARTBEAT_VARIABLE not in env
    assert env["ASCENDIFY_RESTART_COUNT"] == "0"


HANG_RANGE = r"--hang-timeout must be 0 \(off\) or a number of seconds from 1"


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("max_restarts", -1, "--max-restarts must be a whole number from 0 to 1000, got -1"),
        ("hang_timeout", -1.0, HANG_RANGE),
        ("hang_timeout", float("nan"), HANG_RANGE),
        # A thousandth of a second made every healthy job a hang.
        ("hang_timeout", 0.001, HANG_RANGE + r" to 604800, got 0\.001"),
    ],
)
def test_bad_recovery_values_are_refused(flag: str, value: float, message: str) -> None:
    options = LaunchOptions(command=("python", "t.py"), **{flag: value})
    with pytest.raises(AscendifyError, match=message):
        resolve_spec(options, PATH)


def _checkpoint(path: Path, age: float, text: str = "weights") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.utime(path, (age, age))
    return path


def test_latest_checkpoint_is_the_newest_match_inside_the_output_folder(tmp_path: Path) -> None:
    assert latest_checkpoint("ckpt-*.pt", tmp_path).path is None
    for age, name in enumerate(["ckpt-9.pt", "ckpt-10.pt", "other.pt"]):
        _checkpoint(tmp_path / name, 1000 + age)
    assert latest_checkpoint("ckpt-*.pt", tmp_path).path == tmp_path / "ckpt-10.pt"
    found = latest_checkpoint(str(tmp_path / "*.pt"), Path("/elsewhere"))
    assert found.path == tmp_path / "other.pt"
    assert latest_checkpoint(None, tmp_path).path is None


def test_links_to_the_folder_itself_are_not_followed(tmp_path: Path) -> None:
    # A training script's latest -> . and best -> .: glob's ** walked them without end.
    old = _checkpoint(tmp_path / "run" / "ckpt-1.pt", 1000)
    new = _checkpoint(tmp_path / "run" / "deep" / "ckpt-2.pt", 2000)
    for name in ("latest", "best"):
        (tmp_path / name).symlink_to(".")
        (tmp_path / "run" / name).symlink_to("..")
    found = latest_checkpoint("**/*.pt", tmp_path)
    assert found.path == new
    assert found.skipped == ()
    assert latest_checkpoint("run/*.pt", tmp_path).path == old
    # A folder the pattern names is followed, as glob does: that cannot loop.
    assert latest_checkpoint("latest/run/ckpt-1.pt", tmp_path).path == tmp_path / "latest" / (
        "run/ckpt-1.pt"
    )


def test_the_walk_looks_at_a_bounded_number_of_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resume, "MAX_ENTRIES", 50)
    for index in range(100):
        _checkpoint(tmp_path / f"d{index:03}" / "c.pt", 1000 + index)
    found = latest_checkpoint("**/c.pt", tmp_path)
    assert found.path is not None  # the newest among what it saw
    assert (
        found.note == f"looked at the first 50 entries under {tmp_path} only (--resume-from-latest)"
    )


def test_folders_empty_files_and_hidden_ones_are_never_handed_over(tmp_path: Path) -> None:
    good = _checkpoint(tmp_path / "ckpt-1.pt", 1000)
    _checkpoint(tmp_path / "ckpt-2.pt", 2000, text="")  # empty: a save that never wrote
    (tmp_path / "ckpt-3.pt").mkdir()  # a folder
    os.utime(tmp_path / "ckpt-3.pt", (3000, 3000))
    os.mkfifo(tmp_path / "ckpt-4.pt")
    _checkpoint(tmp_path / ".ckpt-5.pt", 5000)  # * does not match a leading dot, as in glob
    assert latest_checkpoint("ckpt-*", tmp_path).path == good
    assert latest_checkpoint("*", tmp_path).path == good
    assert latest_checkpoint(".ckpt-*", tmp_path).path == tmp_path / ".ckpt-5.pt"


def test_a_file_a_stopped_attempt_wrote_at_its_end_is_skipped_with_the_reason(
    tmp_path: Path,
) -> None:
    complete = _checkpoint(tmp_path / "ckpt-1.pt", 1000)
    torn = _checkpoint(tmp_path / "ckpt-2.pt", 2005)  # written while the ranks were stopped
    open_one = _checkpoint(tmp_path / "ckpt-3.pt", 1990)  # being written when the stop began
    size = open_one.stat().st_size
    writing = {str(open_one.resolve()): (size, open_one.stat().st_mtime_ns)}
    stopped = (StoppedAttempt(0, began=2000.0, ended=2010.0, writing=writing),)
    found = latest_checkpoint("ckpt-*.pt", tmp_path, stopped)
    assert found.path == complete
    assert found.skipped == (
        (str(torn), "written while attempt 0's ranks were being stopped"),
        (
            str(open_one),
            "open for writing by a process of attempt 0 when its ranks were stopped, "
            "and not written since",
        ),
    )
    assert (
        found.report()[0] == f"skipped {torn}: written while attempt 0's ranks were being stopped"
    )
    # Written again by a later attempt: complete again.
    _checkpoint(open_one, 3000)
    assert latest_checkpoint("ckpt-*.pt", tmp_path, stopped).path == open_one


def test_a_save_written_during_a_teardown_no_process_outlived_is_complete(
    tmp_path: Path,
) -> None:
    # The ranks saved when asked and ended within the grace period: nothing was killed mid-write.
    _checkpoint(tmp_path / "ckpt-1.pt", 1000)
    saved = _checkpoint(tmp_path / "ckpt-2.pt", 2005)
    stopped = (StoppedAttempt(0, began=2000.0, ended=2010.0, killed=False),)
    assert latest_checkpoint("ckpt-*.pt", tmp_path, stopped).path == saved


def test_a_file_still_growing_is_skipped(tmp_path: Path) -> None:
    complete = _checkpoint(tmp_path / "a.pt", 1000)
    growing = tmp_path / "b.pt"
    growing.write_bytes(b"x")
    done = threading.Event()

    def write() -> None:
        with growing.open("ab") as handle:
            while not done.is_set():
                handle.write(b"x" * 1024)
                handle.flush()
                time.sleep(0.01)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        found = latest_checkpoint("*.pt", tmp_path)
    finally:
        done.set()
        writer.join()
    assert found.path == complete
    assert found.skipped == (
        (str(growing), "still being written (it grew or changed while it was looked at)"),
    )


def test_a_stop_signal_ends_the_search_with_no_file(tmp_path: Path) -> None:
    for index in range(600):
        _checkpoint(tmp_path / f"c{index}.pt", 1000 + index)
    assert latest_checkpoint("*.pt", tmp_path, interrupted=lambda: True).path is None


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


def test_a_busy_rank_is_life_but_not_output() -> None:
    silence = Silence(timeout=5)
    silence.output()
    quiet_since = silence.quiet_since
    silence.busy()
    assert silence.quiet_since == quiet_since  # still silent: a report tells how long
    assert silence.pieces == 2  # the peers see life
    assert not silence.hung(silence.last + 4.9)


STACK = """Thread 0x1 (most recent call first):
  File "t.py", line {line} in main
Current thread 0x2 (most recent call first):
  File "t.py", line 3 in worker"""


def test_a_stack_that_moved_is_busy_and_the_handling_thread_does_not_count() -> None:
    first = {0: {100: STACK.format(line=7)}}
    # The kernel picked another thread to run the handler: the same stacks.
    other_thread = {0: {100: STACK.format(line=7).replace("Current thread 0x2", "Thread 0x2")}}
    assert stack_change(first, other_thread) is None
    moved = stack_change(first, {0: {100: STACK.format(line=8)}})
    assert moved == Moved(0, "the Python stack of process 100 moved")
    # A process caught outside Python code (no frame) proves nothing either way.
    assert stack_change(first, {0: {100: "Garbage-collecting"}}) is None


def test_heartbeat_touches_the_file_the_launcher_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "rank_0"
    monkeypatch.delenv(HEARTBEAT_VARIABLE, raising=False)
    heartbeat()  # outside the launcher: nothing
    monkeypatch.setenv(HEARTBEAT_VARIABLE, str(path))
    heartbeat()
    assert path.exists()
    os.utime(path, (1000, 1000))
    heartbeat()
    assert path.stat().st_mtime > 1000
