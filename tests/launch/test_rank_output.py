"""Rank output reaches the console and the log at once and in bounded memory, progress bars too."""

from __future__ import annotations

import io
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from ascendify.launch.agent import LINE_LIMIT, _console_line, output_pieces
from tests.conftest import HANG_BOUND, ascendify_env


class Chunks(io.RawIOBase):
    """A stream that hands out the given chunks one read at a time, as a pipe does."""

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if not self._chunks:
            return 0
        chunk = self._chunks.pop(0)
        buffer[: len(chunk)] = chunk
        return len(chunk)


def pieces(*chunks: bytes) -> list[bytes]:
    return list(output_pieces(io.BufferedReader(Chunks(list(chunks)))))


def test_every_line_end_cuts_a_piece() -> None:
    assert pieces(b"a\nb\r\nc\r50%\r", b"100%\rdone") == [
        b"a\n", b"b\r\n", b"c\r", b"50%\r", b"100%\r", b"done",
    ]  # fmt: skip


def test_a_line_without_an_end_is_passed_on_in_bounded_pieces() -> None:
    data = b"x" * (3 * LINE_LIMIT + 10)
    cut = pieces(*(data[i : i + 5000] for i in range(0, len(data), 5000)))
    assert [len(piece) for piece in cut] == [LINE_LIMIT] * 3 + [10]
    assert b"".join(cut) == data


def test_the_console_prefixes_each_piece_and_closes_cut_lines() -> None:
    shown = b""
    previous = b"\n"
    for piece in pieces(b"10%\r", b"\nok\n", b"x" * LINE_LIMIT, b"tail"):
        shown += _console_line(b"[r]: ", piece, previous)
        previous = piece
    assert shown == b"[r]: 10%\r\n[r]: ok\n[r]: " + b"x" * LINE_LIMIT + b"\n[r]: tail\n"


def launcher(tmp_path: Path, code: str, *flags: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "ascendify", "run", "--nproc-per-node", "1", *flags,
         "--log-dir", str(tmp_path / "logs"), "python", "-c", code],
        env=ascendify_env(),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.mark.slow
def test_a_progress_bar_shows_before_its_line_ends(tmp_path: Path) -> None:
    code = (
        "import os, sys, time\n"
        "sys.stdout.write('epoch 1:  50%\\r'); sys.stdout.flush()\n"
        "while not os.path.exists('seen'):\n"
        "    time.sleep(0.05)\n"
    )
    process = launcher(tmp_path, code)
    assert process.stdout is not None
    shown, deadline = b"", time.monotonic() + HANG_BOUND
    try:
        while b"50%" not in shown and time.monotonic() < deadline:
            if select.select([process.stdout], [], [], 0.1)[0]:
                shown += os.read(process.stdout.fileno(), 65536)
    finally:
        (tmp_path / "seen").touch()  # the rank ends only after this
        process.communicate(timeout=HANG_BOUND)
    assert b"[rank 0]: epoch 1:  50%\r" in shown


@pytest.mark.slow
def test_output_without_newlines_keeps_the_launcher_small(tmp_path: Path) -> None:
    size = 48 * 2**20
    code = (
        "import sys\n"
        f"for _ in range({size // 2**20}):\n"
        "    sys.stdout.write('x' * 2**20); sys.stdout.flush()\n"
    )
    process = launcher(tmp_path, code, "--tee", "0")
    peak = 0
    watched = psutil.Process(process.pid)
    while process.poll() is None:
        try:
            peak = max(peak, watched.memory_info().rss)
        except psutil.NoSuchProcess:
            break
        time.sleep(0.02)
    process.communicate(timeout=HANG_BOUND)
    assert process.returncode == 0
    assert (tmp_path / "logs" / "rank_0.log").stat().st_size == size
    assert peak < 64 * 2**20, f"launcher grew to {peak / 2**20:.0f} MiB for {size >> 20} MiB"
