"""Log folders written by a program that may do anything: ``explain`` reads regular files only,
within limits, says what it skipped and why, never drops a rank, and prints no control character
a log holds; none of these cases hangs, and none ends in an internal error (exit 3)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ascendify import cli
from ascendify.explain import explain_paths
from ascendify.explain.analysis import Explanation, render, to_json
from ascendify.explain.catalogue import load
from ascendify.explain.reader import scan
from ascendify.explain.sources import MAX_DEPTH, ExplainInputError, Source
from tests.conftest import HANG_BOUND, RunCli

OOM = (
    "2025-10-11 15:00:07 RuntimeError: NPU out of memory. Tried to allocate 5.03 GiB (NPU 1; "
    "60.96 GiB total capacity; 49.47 GiB already allocated; 1.32 GiB free; 57.55 GiB reserved in "
    "total by PyTorch)\n"
)
ECHO = (
    "[E1011 15:00:30.000000 compiler_depend.ts:429] EI0002: [PID: 2969] 2025-10-11-15:00:30.713.335 "
    "The wait execution of the Notify register times out. Reason: The Notify register has not "
    "received the Notify record from remote rank: [1].\n"
)


def _bounded(work: Callable[[], Any]) -> Any:
    """``work()`` in a thread that is waited on within the hang bound: a read that blocks (a
    FIFO) fails the test instead of stalling the suite."""
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["value"] = work()
        except BaseException as error:  # handed to the test's thread
            result["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(HANG_BOUND)
    assert not thread.is_alive(), "explain blocked"
    if "error" in result:
        raise result["error"]
    return result["value"]


def _explained(folder: Path) -> Explanation:
    verdict: Explanation = _bounded(lambda: explain_paths([folder]))
    return verdict


def _skipped(verdict: Explanation) -> dict[str, str]:
    return {entry["path"]: entry["reason"] for entry in to_json(verdict)["skipped"]}


def test_a_fifo_in_the_log_folder_is_skipped_not_waited_on(tmp_path: Path) -> None:
    (tmp_path / "rank_0.log").write_text(ECHO)
    (tmp_path / "rank_1.log").write_text(OOM)
    os.mkfifo(tmp_path / "rank_2.log")  # a rank's log replaced by a FIFO
    (tmp_path / "nested").mkdir()
    os.mkfifo(tmp_path / "nested" / "trap.txt")
    os.mkfifo(tmp_path / "rank_1.log.times")
    verdict = _explained(tmp_path)
    assert verdict.root is not None
    assert verdict.root.who == 1
    assert verdict.root.headline.signature.id == "NPU-OOM"
    skipped = _skipped(verdict)
    assert skipped[str(tmp_path / "rank_2.log")] == "not a regular file (a FIFO)"
    assert skipped[str(tmp_path / "nested" / "trap.txt")] == "not a regular file (a FIFO)"
    assert f"{tmp_path / 'rank_2.log'}: not a regular file (a FIFO)" in render(verdict)


def test_a_fifo_given_as_the_path_is_an_input_error(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "rank_0.log")
    with pytest.raises(ExplainInputError, match="no log files found"):
        _bounded(lambda: explain_paths([tmp_path / "rank_0.log"]))


def test_a_nul_byte_in_a_ranks_head_does_not_drop_the_rank(tmp_path: Path) -> None:
    """Rank 1 failed first; a crash left zeros at the start of its log. Were it dropped, rank 0's
    timeout would be blamed."""
    (tmp_path / "rank_0.log").write_text(ECHO)
    (tmp_path / "rank_1.log").write_bytes(b"\0" * 512 + b"\n" + OOM.encode())
    verdict = _explained(tmp_path)
    assert verdict.root is not None
    assert verdict.root.who == 1
    assert [report.who for report in verdict.ranks] == [1, 0]


def test_a_binary_file_of_no_rank_is_skipped_and_said(tmp_path: Path) -> None:
    (tmp_path / "rank_0.log").write_text(OOM)
    (tmp_path / "core").write_bytes(b"\x7fELF\0\0\0" + b"Error" * 10)
    verdict = _explained(tmp_path)
    assert [report.who for report in verdict.ranks] == [0]
    assert _skipped(verdict)[str(tmp_path / "core")] == "binary (a NUL byte in its first 4 KiB)"


def test_summary_and_marks_linked_to_dev_zero_are_not_read(tmp_path: Path) -> None:
    (tmp_path / "rank_0.log").write_text(OOM)
    (tmp_path / "run_summary.json").symlink_to("/dev/zero")
    (tmp_path / "rank_0.log.times").symlink_to("/dev/zero")
    verdict = _explained(tmp_path)
    assert verdict.root is not None
    assert verdict.root.who == 0
    skipped = _skipped(verdict)
    assert skipped[str(tmp_path / "run_summary.json")] == "not a regular file (a character device)"
    assert skipped[str(tmp_path / "rank_0.log.times")] == "not a regular file (a character device)"


def test_a_summary_too_large_to_be_one_is_skipped_and_said(tmp_path: Path) -> None:
    (tmp_path / "rank_0.log").write_text(OOM)
    with (tmp_path / "run_summary.json").open("wb") as summary:
        summary.truncate(64 << 20)  # sparse: costs no disk
    verdict = _explained(tmp_path)
    assert verdict.root is not None
    assert "larger than 16 MiB" in _skipped(verdict)[str(tmp_path / "run_summary.json")]


CONTROL = (
    "\x1b[31m\x1b]0;owned\x07ValueError: bad \x1b[2Jbatch\r\u202eevil\u202c at step 3\x1b[0m\n"
)


def test_control_characters_of_a_log_are_not_printed_or_served(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "run\x1b[1m"
    folder.mkdir()
    (folder / "rank_0.log").write_text(CONTROL)
    assert cli.main(["explain", str(folder)]) == 1
    text = capsys.readouterr().out
    assert cli.main(["explain", "--json", str(folder)]) == 1
    served = capsys.readouterr().out
    document = json.loads(served)
    headline = document["root"]["headline"]
    assert headline["text"] == "ValueError: bad batch\\x0d\\u202eevil\\u202c at step 3"
    assert headline["path"].startswith(str(tmp_path / "run\\x1b[1m"))
    for shown in (text, headline["text"], headline["path"], document["cause"]):
        assert not any(char in shown for char in "\x1b\r\u202e\u202c\x07"), shown


def test_control_characters_in_an_unmatched_end_are_escaped(tmp_path: Path) -> None:
    (tmp_path / "rank_0.log").write_text("step 1\rprogress\x1b[K\nfatal: \u202edone\n")
    verdict = _explained(tmp_path)
    assert verdict.unmatched is not None
    assert verdict.unmatched.error == "fatal: \\u202edone"
    assert verdict.unmatched.last_lines == ("step 1\\x0dprogress", "fatal: \\u202edone")


Nested = Callable[[Path], Path]


@pytest.fixture
def nested() -> Iterator[Nested]:
    """``nested(root)``: ``root/d/d/...`` 1,200 folders deep, made and removed one folder at a
    time (``os.makedirs``, ``shutil.rmtree`` and pytest's clean-up of old temporary folders recurse
    once per folder, past Python's recursion limit)."""
    made: list[Path] = []

    def make(root: Path) -> Path:
        folder = root
        for _ in range(1200):
            folder = folder / "d"
            folder.mkdir()
            made.append(folder)
        return folder

    yield make
    for folder in reversed(made):
        for file in folder.iterdir():
            if not file.is_dir():
                file.unlink()
        folder.rmdir()


def test_folders_1200_deep_end_with_an_input_error(
    tmp_path: Path, nested: Nested, capsys: pytest.CaptureFixture[str]
) -> None:
    (nested(tmp_path) / "rank_0.log").write_text(OOM)
    assert cli.main(["explain", str(tmp_path)]) == 2
    assert f"nested more than {MAX_DEPTH} deep" in capsys.readouterr().err


def test_a_log_over_the_read_limit_is_read_at_its_head_and_tail(tmp_path: Path) -> None:
    filler = "2025-10-11 15:00:00 step 1 loss 1.0\n" * 200
    log = tmp_path / "rank_0.log"
    log.write_text(OOM + filler + ECHO + filler + "ValueError: at the end\n")
    skipped: list[Any] = []
    findings = list(scan(Source(log, 0, "rank"), load(), limit=4096, skipped=skipped))
    assert [(f.signature.id, f.line_no) for f in findings] == [("NPU-OOM", 1), ("PY-EXCEPTION", 0)]
    assert "read in part: its first and last" in skipped[0].reason
    assert [f.signature.id for f in scan(Source(log, 0, "rank"), load())] == [
        "NPU-OOM", "HCCL-EI0002", "PY-EXCEPTION",
    ]  # fmt: skip


@pytest.mark.slow
def test_the_command_on_hostile_folders_never_hangs_and_never_ends_in_exit_3(
    tmp_path: Path, nested: Nested, run_cli: RunCli
) -> None:
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    (hostile / "rank_0.log").write_text(ECHO)
    (hostile / "rank_1.log").write_bytes(b"\0\x1b[2J" + CONTROL.encode())
    os.mkfifo(hostile / "rank_2.log")
    (hostile / "run_summary.json").symlink_to("/dev/zero")
    (hostile / "rank_1.log.times").symlink_to("/dev/zero")
    result = run_cli(["explain", str(hostile)])
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("root cause: rank 1"), result.stdout
    assert "\x1b" not in result.stdout
    assert "\r" not in result.stdout
    assert f"{hostile / 'rank_2.log'}: not a regular file (a FIFO)" in result.stdout
    deep = tmp_path / "deep"
    deep.mkdir()
    (nested(deep) / "rank_0.log").write_text(OOM)
    result = run_cli(["explain", str(deep)])
    assert result.returncode == 2, result.stderr
    assert "nested more than" in result.stderr
    assert "Traceback" not in result.stderr
