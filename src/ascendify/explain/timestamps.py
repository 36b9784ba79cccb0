"""Wall-clock times of log lines: read from the line itself, or from the launcher's time marks.

Formats read (each a short anchored pattern, linear in the line): ISO-like ``2025-04-08 18:07:20``
(also ``/`` in the date, ``T`` or ``-`` between date and time, as Ascend's
``2025-04-08-18:07:20.444.436``), glog's ``[E1219 03:01:55.989449808`` with or without the bracket
(no year: the file's year is used) and vLLM's ``ERROR 08-28 02:33:28``. All are read as UTC: only their order matters.

The launcher writes ``rank_<r>.log.times`` beside each rank log: lines ``<byte offset> <epoch>``,
the time at which the output from that offset on arrived (see :mod:`ascendify.launch.agent`).
"""

from __future__ import annotations

import calendar
import re
import time
from collections.abc import Iterator
from pathlib import Path

from ascendify.explain.sources import open_regular

_ISO = re.compile(r"(\d{4})[-/](\d\d)[-/](\d\d)[ T-](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?")
# glog and c10's logging: ``[E1219 03:01:55.989449808``, ``[W326 11:49:12.331714626`` (the month
# is not padded), torch.distributed.elastic's ``E0913 09:12:35.512000 140 api.py:826]`` (no bracket).
_GLOG = re.compile(r"(?<![\w.:-])[EWIF](\d{1,2})(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{1,9})")
_LEVEL = re.compile(r"\b(?:ERROR|WARNING|INFO|DEBUG) (\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)\b")


def line_time(line: str, year: int) -> float | None:
    """The epoch seconds of the first time stamp in ``line`` (``year`` for stamps without one)."""
    match = _ISO.search(line)
    if match:
        *fields, frac = match.groups()
        return _epoch(tuple(int(field) for field in fields), frac)
    match = _GLOG.search(line) or _LEVEL.search(line)
    if match:
        groups = match.groups()
        frac = groups[5] if len(groups) > 5 else None
        return _epoch((year, *(int(field) for field in groups[:5])), frac)
    return None


def _epoch(fields: tuple[int, ...], frac: str | None) -> float | None:
    """Seconds since the epoch of (year, month, day, hour, minute, second) and a fraction."""
    _, month, day, hour, minute, second = fields
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and second < 61):
        return None
    seconds = calendar.timegm((*fields, 0, 0, 0))
    return seconds + (int(frac) / 10 ** len(frac) if frac else 0.0)


HEAD = 64 * 1024  # bytes of a file searched for a dated time stamp


def file_year(path: Path) -> int:
    """The year for stamps without one: the first dated stamp's in the file's head, else the
    year the file was last written."""
    try:
        with open_regular(path) as handle:
            head = handle.read(HEAD).decode("utf-8", "replace")
        match = _ISO.search(head)
        if match:
            return int(match.group(1))
        return time.gmtime(path.stat().st_mtime).tm_year
    except OSError:
        return time.gmtime().tm_year


MARK_LINE_LIMIT = 64  # bytes of a mark line ("<offset> <epoch>" takes about 25)


class Marks:
    """The launcher's time marks of one log, read forward as the log is read (bounded memory:
    a line is read up to :data:`MARK_LINE_LIMIT` bytes; only a regular file is opened)."""

    def __init__(self, path: Path) -> None:
        self._marks = _read_marks(path)
        self._current: float | None = None
        self._next = next(self._marks, None)

    def at(self, offset: int) -> float | None:
        """The time the byte at ``offset`` arrived; offsets must not go backwards."""
        while self._next is not None and self._next[0] <= offset:
            self._current = self._next[1]
            self._next = next(self._marks, None)
        return self._current


def _read_marks(path: Path) -> Iterator[tuple[int, float]]:
    try:
        handle = open_regular(path)
    except OSError:
        return  # none, or not a regular file (a link to /dev/zero): the log is read without
    with handle:
        while raw := handle.readline(MARK_LINE_LIMIT):
            if len(raw) == MARK_LINE_LIMIT and not raw.endswith(b"\n"):
                while (rest := handle.readline(MARK_LINE_LIMIT)) and not rest.endswith(b"\n"):
                    pass  # not a mark: its end is skipped too
                continue
            parts = raw.split()
            if len(parts) == 2:
                try:
                    yield int(parts[0]), float(parts[1])
                except ValueError:
                    continue
