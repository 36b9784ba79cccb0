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
    marked: bool = False  # the time is the launcher's mark (epoch seconds), not read from a line
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
        """Read block by block; the line cut by a block's end is carried to the next one (a line
        longer than :data:`LINE_LIMIT` is matched on its first part only). Blocks are searched
        in place, between bounds, never copied."""
        read = handle.read  # type: ignore[attr-defined]
        self.line_no = 1  # of the next line to scan
        position = 0  # in the file, of the block read
        pending, pending_at = b"", 0  # the start of a line cut by the block's end, and where
        while data := read(BLOCK):
            first = data.find(b"\n")
            if first == -1:
                pending_at = pending_at if pending else position
                pending += data[: max(0, LINE_LIMIT - len(pending))]
                position += len(data)
                continue
            if pending:
                joined = pending + data[: first + 1]
                yield from self._scan(joined, 0, len(joined), pending_at)
            else:
                yield from self._scan(data, 0, first + 1, position)
            last = data.rfind(b"\n") + 1
            yield from self._scan(data, first + 1, last, position)
            pending, pending_at = data[last : last + LINE_LIMIT], position + last
            position += len(data)
        if pending:
            yield from self._scan(pending, 0, len(pending), pending_at)

    def _scan(self, chunk: bytes, begin: int, end: int, at: int) -> Iterator[Finding]:
        """The findings of the whole lines ``chunk[begin:end]``; ``chunk`` starts at byte ``at``
        of the file."""
        counted = begin
        for start in _candidate_lines(chunk, begin, end):
            self.line_no += chunk.count(b"\n", counted, start)
            counted = start
            finding = self._finding(chunk, start, self.line_no, at)
            if finding is not None:
                yield finding
        self.line_no += chunk.count(b"\n", counted, end)

    def _finding(self, chunk: bytes, start: int, line_no: int, at: int) -> Finding | None:
        end = chunk.find(b"\n", start)
        raw = chunk[start : end if end != -1 else len(chunk)]
        line = raw[:LINE_LIMIT].decode("utf-8", "replace").rstrip("\r")
        who, line = _who(self.source, line)
        signature = self.catalogue.match(line)
        if signature is None:
            return None
        when = self.marks.at(at + start)  # when it arrived, on the launcher's clock
        marked = when is not None
        if when is None:
            when = timestamps.line_time(line, self.year)
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
            marked=marked,
        )


def _candidate_lines(chunk: bytes, begin: int, end: int) -> list[int]:
    """The start of every line of ``chunk[begin:end]`` (whole lines) that holds an anchor."""
    starts: set[int] = set()
    match = ANCHOR.search(chunk, begin, end)
    while match is not None:
        after = _mark_line(chunk, match.start(), begin, end, starts)
        match = ANCHOR.search(chunk, after, end) if after < end else None
    for word in ANCHOR_WORDS:
        position = chunk.find(word, begin, end)
        while position != -1:
            after = _mark_line(chunk, position, begin, end, starts)
            position = chunk.find(word, after, end) if after < end else -1
    return sorted(starts)


def _mark_line(chunk: bytes, position: int, begin: int, end: int, starts: set[int]) -> int:
    """Note the line holding ``position``; where the next line starts."""
    starts.add(chunk.rfind(b"\n", begin, position) + 1 or begin)
    line_end = chunk.find(b"\n", position, end)
    return end if line_end == -1 else line_end + 1


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
