"""Read one log file as a stream and report the lines that match a failure signature.

The file is read in blocks of :data:`BLOCK` bytes. In each block only the lines that hold one of
the catalogue's anchors are decoded and matched (one regular expression with a literal first
letter and a few ``bytes.find`` find them at C speed), so memory stays at about two blocks
whatever the file's size, and ordinary lines cost a few scans each.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ascendify.explain import oom, timestamps
from ascendify.explain.catalogue import ANCHOR, ANCHOR_WORDS, Catalogue, Signature, exception_name
from ascendify.explain.sources import Source

BLOCK = 4 << 20
LINE_LIMIT = 8192  # characters of a line kept for matching and showing
NEAR = 2048  # bytes searched after, then before, a line without a time stamp for the nearest one
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


def scan_all(sources: list[Source], catalogue: Catalogue) -> Iterator[Finding]:
    for source in sources:
        try:
            yield from scan(source, catalogue)
        except OSError:
            continue  # a log that vanished or cannot be read says nothing; the others still do


def scan(source: Source, catalogue: Catalogue) -> Iterator[Finding]:
    """Every line of ``source`` that matches a signature, in file order."""
    with source.path.open("rb") as handle:
        yield from _FileScan(source, catalogue).run(handle)


class _FileScan:
    def __init__(self, source: Source, catalogue: Catalogue) -> None:
        self.source = source
        self.catalogue = catalogue
        self.marks = timestamps.Marks(timestamps.times_path(source.path.resolve()))
        self.year = timestamps.file_year(source.path)

    def run(self, handle: object) -> Iterator[Finding]:
        read = handle.read  # type: ignore[attr-defined]
        line_no = 1  # of the first line of the current chunk
        offset = 0  # of the current chunk in the file
        pending = b""
        while True:
            data: bytes = read(BLOCK)
            block = pending + data
            if not block:
                return
            end = len(block)
            if data:
                end = block.rfind(b"\n") + 1
                if end == 0 and len(block) < 2 * BLOCK:
                    pending = block  # a line longer than a block: wait for its end, up to a limit
                    continue
                end = end or len(block)
            chunk, pending = block[:end], block[end:]
            counted, lines = 0, line_no
            for start in _candidate_lines(chunk):
                lines += chunk.count(b"\n", counted, start)
                counted = start
                finding = self._finding(chunk, start, lines, offset)
                if finding is not None:
                    yield finding
            line_no = lines + chunk.count(b"\n", counted)
            offset += len(chunk)
            if not data:
                return

    def _finding(self, chunk: bytes, start: int, line_no: int, offset: int) -> Finding | None:
        end = chunk.find(b"\n", start)
        raw = chunk[start : end if end != -1 else len(chunk)]
        line = raw[:LINE_LIMIT].decode("utf-8", "replace").rstrip("\r")
        who, line = _who(self.source, line)
        signature = self.catalogue.match(line)
        if signature is None:
            return None
        when = timestamps.line_time(line, self.year)
        if when is None:
            when = self.marks.at(offset + start)
        if when is None:
            when = _time_near(chunk, start, end if end != -1 else len(chunk), self.year)
        return Finding(
            who=who,
            signature=signature,
            path=self.source.path,
            line_no=line_no,
            time=when,
            text=line.strip(),
            exception=exception_name(line) if signature.exception else None,
            oom=oom.parse(line),
        )


def _candidate_lines(chunk: bytes) -> list[int]:
    """The start of every line of ``chunk`` that holds an anchor."""
    starts: set[int] = set()
    match = ANCHOR.search(chunk)
    while match is not None:
        end = _mark_line(chunk, match.start(), starts)
        match = ANCHOR.search(chunk, end) if end != -1 else None
    for word in ANCHOR_WORDS:
        position = chunk.find(word)
        while position != -1:
            end = _mark_line(chunk, position, starts)
            position = chunk.find(word, end) if end != -1 else -1
    return sorted(starts)


def _mark_line(chunk: bytes, position: int, starts: set[int]) -> int:
    """Note the line holding ``position``; the position of its end (-1 at the chunk's end)."""
    starts.add(chunk.rfind(b"\n", 0, position) + 1)
    return chunk.find(b"\n", position)


def _who(source: Source, line: str) -> tuple[int | str, str]:
    """The rank a line belongs to (its file's, else the ``[rank N]:`` prefix torch and the
    launcher print), and the line without that prefix."""
    stripped = line.lstrip()
    for prefix in _RANK_PREFIXES:
        if stripped.startswith(prefix):
            close = stripped.find("]:", len(prefix))
            number = stripped[len(prefix) : close]
            if close != -1 and number.isdigit():
                rest = stripped[close + 2 :].lstrip()
                return (source.rank if source.rank is not None else int(number)), rest
    return (source.rank if source.rank is not None else source.label), line


def _time_near(chunk: bytes, start: int, end: int, year: int) -> float | None:
    """The time of a line without a stamp: the first stamp in the few lines after it (torch_npu
    prints ``[ERROR] <time> ...`` under the error), else the last one before it (the rank was
    alive then)."""
    after = chunk[end : end + NEAR].decode("utf-8", "replace").splitlines()[1:8]
    before = chunk[max(0, start - NEAR) : start].decode("utf-8", "replace").splitlines()
    for line in (*after, *reversed(before)):
        when = timestamps.line_time(line, year)
        if when is not None:
            return when
    return None
