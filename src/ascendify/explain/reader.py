"""Read one log file as a stream and report the lines that match a failure signature.

The file is read in blocks of :data:`BLOCK` bytes. In each block only the lines that hold one of
the catalogue's anchors are decoded and matched (``bytes.find`` finds them at C speed), so memory
stays at about two blocks whatever the file's size, and ordinary lines cost one scan each.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ascendify.explain import oom, timestamps
from ascendify.explain.catalogue import ANCHORS, Catalogue, Signature, exception_name
from ascendify.explain.sources import Source

BLOCK = 4 << 20
LINE_LIMIT = 8192  # characters of a line kept for matching and showing
LOOKBACK = 4096  # bytes searched back for a time stamp when the line has none
_RANK_PREFIXES = ("[rank ", "[rank")


@dataclass(frozen=True)
class Finding:
    who: int | str  # the global rank, or the file's name when no rank is known
    signature: Signature
    path: Path
    line_no: int
    time: float | None
    text: str
    exception: str | None = None
    oom: oom.OutOfMemory | None = None


def scan(source: Source, catalogue: Catalogue) -> Iterator[Finding]:
    """Every line of ``source`` that matches a signature, in file order."""
    marks = timestamps.Marks(timestamps.times_path(source.path.resolve()))
    year = timestamps.file_year(source.path)
    line_no = 1  # of the first line of the current block
    offset = 0  # of the current block in the file
    pending = b""
    with source.path.open("rb") as handle:
        while True:
            data = handle.read(BLOCK)
            block = pending + data
            if not block:
                break
            if data:
                end = block.rfind(b"\n") + 1
                if end == 0 and len(block) < 2 * BLOCK:
                    pending = block  # a line longer than a block: wait for its end, up to a limit
                    continue
                end = end or len(block)
            else:
                end = len(block)
            chunk, pending = block[:end], block[end:]
            counted, counted_lines = 0, line_no
            for start in _candidate_lines(chunk):
                counted_lines += chunk.count(b"\n", counted, start)
                counted = start
                finding = _finding(source, catalogue, chunk, start, counted_lines, offset, marks, year)
                if finding is not None:
                    yield finding
            line_no = counted_lines + chunk.count(b"\n", counted)
            offset += len(chunk)
            if not data:
                break


def _candidate_lines(chunk: bytes) -> list[int]:
    starts: set[int] = set()
    for anchor in ANCHORS:
        position = chunk.find(anchor)
        while position != -1:
            start = chunk.rfind(b"\n", 0, position) + 1
            starts.add(start)
            end = chunk.find(b"\n", position)
            if end == -1:
                break
            position = chunk.find(anchor, end)
    return sorted(starts)


def _finding(
    source: Source,
    catalogue: Catalogue,
    chunk: bytes,
    start: int,
    line_no: int,
    offset: int,
    marks: timestamps.Marks,
    year: int,
) -> Finding | None:
    end = chunk.find(b"\n", start)
    raw = chunk[start : end if end != -1 else len(chunk)]
    line = raw[:LINE_LIMIT].decode("utf-8", "replace").rstrip("\r")
    who, line = _who(source, line)
    signature = catalogue.match(line)
    if signature is None:
        return None
    when = timestamps.line_time(line, year)
    if when is None:
        when = marks.at(offset + start)
    if when is None:
        when = _time_before(chunk, start, year)
    return Finding(
        who=who,
        signature=signature,
        path=source.path,
        line_no=line_no,
        time=when,
        text=line.strip(),
        exception=exception_name(line) if signature.exception else None,
        oom=oom.parse(line),
    )


def _who(source: Source, line: str) -> tuple[int | str, str]:
    """The rank a line belongs to, and the line without a ``[rank N]:`` prefix."""
    if source.rank is not None:
        return source.rank, line
    stripped = line.lstrip()
    for prefix in _RANK_PREFIXES:
        if stripped.startswith(prefix):
            close = stripped.find("]:", len(prefix))
            number = stripped[len(prefix) : close]
            if close != -1 and number.isdigit():
                return int(number), stripped[close + 2 :].lstrip()
    return source.label, line


def _time_before(chunk: bytes, start: int, year: int) -> float | None:
    """The last time stamp in the lines just before ``start``: the rank was alive then."""
    window = chunk[max(0, start - LOOKBACK) : start].decode("utf-8", "replace")
    for line in reversed(window.splitlines()):
        when = timestamps.line_time(line, year)
        if when is not None:
            return when
    return None
