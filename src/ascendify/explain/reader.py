"""Read one log file as a stream and report the lines that match a failure signature.

A line is looked at only when its first :data:`LINE_LIMIT` bytes hold one of the catalogue's
anchors (:func:`~ascendify.explain.catalogue.has_anchor`); then those bytes are decoded and matched.
The file is read in blocks of :data:`BLOCK` bytes, and each block is searched in place with the
anchors' RE2 patterns (one pass each, at C speed): only the lines they hit are decoded, the others
cost nothing but the block's newline count, which gives the line numbers. Memory stays at about two
blocks whatever the file's size. A line cut by a block's end is carried to the next block as its
first :data:`LINE_LIMIT` bytes. The few bytes around a hit without a time stamp are read again
from the file where the block does not hold them, so no result depends on where a block ends: the
tests compare it with a line-by-line reading of the whole file.

A log larger than :data:`READ_LIMIT` is read in part: its first and last halves of that many bytes
(where a failure and its echoes are), and the verdict lists it with what was read; the lines of
its tail have no line number. Every line shown has its control characters made printable
(:func:`~ascendify.terminal_text.printable`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ascendify.explain import oom, timestamps
from ascendify.explain.catalogue import (
    GATES,
    Catalogue,
    Signature,
    exception_name,
    filled,
    has_anchor,
)
from ascendify.explain.sources import Skipped, Source, open_regular
from ascendify.runfolder import times_path
from ascendify.terminal_text import printable

BLOCK = 4 << 20
READ_LIMIT = 1 << 30  # bytes of one log read; of a larger one, its first and last halves
LINE_LIMIT = 8192  # bytes of a line kept for matching and showing
NEAR = 2048  # bytes searched after, then before, a line without a time stamp for the nearest one
ADVICE_LIMIT = 400  # characters of a line's own advice shown with the fix
RANK_TAG_REACH = 400  # characters of a line searched for a rank named inside it
_RANK_PREFIX = re.compile(r"\[rank ?(\d{1,5})\]: ?")
_HOST_PREFIX = re.compile(  # pdsh's "worker-1: " before a rank's own prefix; never "KeyError: ("
    r"^(?![\w.]*(?:Error|Exception|Warning|Exit|Interrupt):)[A-Za-z0-9][\w.-]{0,63}: (?=\[rank ?\d|\()"
)
_RANK_TAG = re.compile(
    r"\[Rank (\d{1,5})\]|\(\w{1,40} rank=(\d{1,5})\b|\bRankID:(\d{1,5})\b|^\[default(\d{1,5})\]:"
    r"|failed \(exitcode: -?\d{1,3}\) local_rank: (\d{1,5}) "
    r"|[\w.-]{1,64}:\d{1,8}:\d{1,8} \[(\d{1,5})\] (?:[\w/.]{1,80}:\d{1,6} )?NCCL "
)


@dataclass(frozen=True)
class Finding:
    who: int | str  # the global rank, or the file's name when no rank is known
    signature: Signature
    path: Path
    line_no: int  # 0: not known (a launcher's fact, or the tail of a log read in part)
    time: float | None
    text: str
    exception: str | None = None
    marked: bool = False  # the time is the launcher's mark (epoch seconds), not read from a line
    oom: oom.OutOfMemory | None = None
    fields: tuple[tuple[str, str], ...] = ()  # what the line told: the signature's pattern groups

    @property
    def meaning(self) -> str:
        return filled(self.signature.meaning, dict(self.fields))

    @property
    def fix(self) -> str:
        fields = dict(self.fields)
        fix = filled(self.signature.fix, fields)
        advice = fields.get("advice")
        if advice:
            fix = f"{fix}; the exception itself says: {advice}"
        check = fields.get("assertion")
        return f"{fix}; the check that failed: assert {check}" if check else fix

    @property
    def told(self) -> bool:
        """Whether the line filled one of its entry's pattern groups (the module, the peer, the
        device's reason), not only advice."""
        return any(name not in ("advice", "assertion") for name, _ in self.fields)

    @property
    def peer(self) -> int | None:
        """The rank this one waited for, where the line names it."""
        value = dict(self.fields).get("peer", "")
        return int(value) if value.isdigit() else None


def scan_all(
    sources: list[Source], catalogue: Catalogue, skipped: list[Skipped] | None = None
) -> Iterator[Finding]:
    """The findings of every source; a log that cannot be read (it vanished, or is no longer a
    regular file), or is read in part, is listed in ``skipped`` and the others still speak."""
    skipped = [] if skipped is None else skipped
    for source in sources:
        try:
            yield from scan(source, catalogue, skipped=skipped)
        except OSError as error:
            skipped.append(Skipped(source.path, f"cannot read: {error.strerror or error}"))


def scan(
    source: Source,
    catalogue: Catalogue,
    limit: int = READ_LIMIT,
    skipped: list[Skipped] | None = None,
) -> Iterator[Finding]:
    """Every line of ``source`` that matches a signature, in file order (of a log over ``limit``
    bytes, its head and tail halves only, noted in ``skipped``)."""
    with open_regular(source.path) as handle:
        size = os.fstat(handle.fileno()).st_size
        reading = _FileScan(source, catalogue)
        if size <= limit:
            yield from reading.run(handle, 0, None)
            return
        half = limit // 2
        if skipped is not None:
            skipped.append(Skipped(source.path, _part_read(size, half)))
        yield from reading.run(handle, 0, half)
        reading.counted = False  # the lines skipped are not counted
        yield from reading.run(handle, _next_line_start(handle, size - half), None)


def _part_read(size: int, half: int) -> str:
    return (
        f"read in part: its first and last {half / 2**20:.0f} MiB of {size / 2**20:.0f} MiB "
        "(lines of its tail have no line number)"
    )


def _next_line_start(handle: BinaryIO, position: int) -> int:
    """The offset of the first line that starts at or after ``position`` (a tail read from the
    middle of a line does not show the line's end as a line)."""
    handle.seek(position - 1)
    while piece := handle.read(1 << 16):
        newline = piece.find(b"\n")
        if newline != -1:
            return handle.tell() - len(piece) + newline + 1
    return handle.tell()


class _FileScan:
    def __init__(self, source: Source, catalogue: Catalogue) -> None:
        self.source = source
        self.catalogue = catalogue
        self.marks = timestamps.Marks(times_path(source.path.resolve()))
        self.year = timestamps.file_year(source.path)
        self.line_no = 1  # of the next line to scan
        self.counted = True  # whether line_no counts from the file's start

    def run(self, handle: BinaryIO, position: int, length: int | None) -> Iterator[Finding]:
        """Read ``length`` bytes (None: to the end) from ``position``, block by block: the whole
        lines of a block are searched in place, between bounds, never copied; the line cut by its
        end is carried as its first :data:`LINE_LIMIT` bytes."""
        self.handle = handle
        handle.seek(position)
        end = None if length is None else position + length
        cut: bytes | None = None  # the kept start of a line that no block has ended yet
        cut_at = position  # where that line starts in the file
        while data := handle.read(BLOCK if end is None else min(BLOCK, end - position)):
            first = data.find(b"\n")
            ends = first if first != -1 else len(data)  # where the cut line's part in data ends
            if cut is not None and len(cut) < LINE_LIMIT:
                cut += data[: min(ends, LINE_LIMIT - len(cut))]
            if first == -1:
                if cut is None:
                    cut, cut_at = data[:LINE_LIMIT], position
                position += len(data)
                continue
            if cut is not None:
                yield from self._cut_line(cut, cut_at, position + first)
            last = data.rfind(b"\n") + 1
            yield from self._scan(data, 0 if cut is None else first + 1, last, position)
            cut = data[last : last + LINE_LIMIT] if last < len(data) else None
            cut_at = position + last
            position += len(data)
        if cut is not None:
            yield from self._cut_line(cut, cut_at, position)  # the last line has no line end

    def _cut_line(self, head: bytes, start: int, end: int) -> Iterator[Finding]:
        """The line of the file's bytes ``start:end`` (its line end or the file's end), read
        across blocks; ``head`` is its kept start."""
        if has_anchor(head):
            finding = self._finding(head, start, end, None, 0)
            if finding is not None:
                yield finding
        self.line_no += 1

    def _scan(self, chunk: bytes, begin: int, end: int, at: int) -> Iterator[Finding]:
        """The findings of the whole lines ``chunk[begin:end]``; ``chunk`` starts at byte ``at``
        of the file."""
        counted = begin
        for start, line_end in _candidate_lines(chunk, begin, end):
            self.line_no += chunk.count(b"\n", counted, start)
            counted = start
            head = chunk[start : min(line_end, start + LINE_LIMIT)]
            if line_end - start > LINE_LIMIT and not has_anchor(head):
                continue  # its anchors lie beyond the part kept
            finding = self._finding(head, at + start, at + line_end, chunk, at)
            if finding is not None:
                yield finding
        self.line_no += chunk.count(b"\n", counted, end)

    def _finding(
        self, head: bytes, start: int, end: int, chunk: bytes | None, at: int
    ) -> Finding | None:
        """The finding of the line at the file's bytes ``start:end`` whose kept start is
        ``head``; ``chunk``, when given, holds the file's bytes from ``at`` on."""
        line = printable(head.decode("utf-8", "replace").rstrip("\r"))
        who, line = _who(self.source, line)
        signature = self.catalogue.match(line)
        if signature is None:
            return None
        when = self.marks.at(start)  # when it arrived, on the launcher's clock
        marked = when is not None
        if when is None:
            when = timestamps.line_time(line, self.year)
        if when is None:
            when = time_near(*self._around(start, end, chunk, at), self.year)
        context = ("", "")
        if exception_name(line) is not None:  # its message may go on below, or name a check above
            context = message_around(*self._around(start, end, chunk, at))
        return Finding(
            who=who,
            signature=signature,
            path=self.source.path,
            line_no=self.line_no if self.counted else 0,
            time=when,
            text=line.strip(),
            exception=exception_name(line) if signature.exception else None,
            oom=oom.parse(line),
            marked=marked,
            fields=_fields(signature, line, context),
        )

    def _around(self, start: int, end: int, chunk: bytes | None, at: int) -> tuple[bytes, int, int]:
        """Bytes holding :data:`NEAR` bytes either side of the line at the file's bytes
        ``start:end``, and the line's bounds in them: ``chunk`` when it holds them, else the
        file's."""
        low = max(0, start - NEAR)
        if chunk is not None and at <= low and end + NEAR <= at + len(chunk):
            return chunk, start - at, end - at
        resume = self.handle.tell()
        self.handle.seek(low)
        around = self.handle.read(end + NEAR - low)
        self.handle.seek(resume)
        return around, start - low, end - low


# An exception whose message tells the user what to do ("please launch with torchrun", "try
# setting X", "did you mean"): that advice is the most specific fix there is.
_ADVICE = re.compile(
    r"\b(?:[Pp]lease|[Tt]ry|[Cc]onsider|[Mm]ake sure|[Yy]ou (?:can|should|need|must|may)|"
    r"[Dd]id you mean|[Ss]et \S+ to|"
    # what the call lacked: "... but you didn't pass a `dataset_text_field` argument"
    r"[Yy]ou (?:didn't|did not|forgot to) (?:pass|set|provide|give|specify))\b"
    # an imperative opening a sentence: "... at start. Decrease GPU memory utilization or ..."
    r"|(?:(?<=\. )|(?<=: )|(?<=; ))(?:Decrease|Increase|Reduce|Lower|Raise|Use|Set|Install|Upgrade|"
    r"Downgrade|Check|Enable|Disable|Add|Remove)\b"
)


def _fields(
    signature: Signature, line: str, context: tuple[str, str] = ("", "")
) -> tuple[tuple[str, str], ...]:
    """What the line tells: the signature's pattern groups, the check a bare AssertionError
    failed on and the advice it gives: a Python exception's whole message (with the lines that
    continue it, ``context``'s second part) when it advises, else the line from its advice on."""
    fields = signature.fields(line) if signature.patterns else {}
    check, more = context
    if check:
        fields["assertion"] = check
    name = exception_name(line) if signature.exception else None
    if name is not None:
        message = f"{line[line.find(name) + len(name) + 1 :].strip()} {more}".strip()
        if _ADVICE.search(message):
            fields["advice"] = message[:ADVICE_LIMIT]
    elif (advice := _ADVICE.search(line)) is not None:
        fields["advice"] = line[advice.start() : advice.start() + ADVICE_LIMIT].strip()
    return tuple(fields.items())


def _candidate_lines(chunk: bytes, begin: int, end: int) -> list[tuple[int, int]]:
    """The start and line end of every line of ``chunk[begin:end]`` (whole lines) that holds an
    anchor, in order."""
    lines: dict[int, int] = {}
    for gate in GATES:
        match = gate.search(chunk, begin, end)
        while match is not None:
            position = match.start()
            start = chunk.rfind(b"\n", begin, position) + 1 or begin
            line_end = chunk.find(b"\n", position, end)
            lines[start] = line_end
            match = gate.search(chunk, line_end + 1, end) if line_end + 1 < end else None
    return sorted(lines.items())


def _who(source: Source, line: str) -> tuple[int | str, str]:
    """The rank a line belongs to (its file's, else the rank the line names), and the line
    without the prefixes that name it: ``[rank 3]:`` (torch, the launcher), a host's ``worker-1:``
    before it (pdsh), ``(VllmWorker rank=1 pid=7)`` (vLLM); a rank named inside the line: torch's
    ``[Rank 2]``, torch_npu's ``RankID:16`` (``-1``: not known), torchrun's ``failed (exitcode: -9)
    local_rank: 0`` and NCCL's ``host:pid:tid [1] NCCL WARN`` (a single node's local rank is its
    rank)."""
    stripped = _HOST_PREFIX.sub("", line.lstrip(), count=1)
    named: int | None = None
    prefix = _RANK_PREFIX.match(stripped)
    if prefix is not None:
        named = int(prefix.group(1))
        stripped = stripped[prefix.end() :].lstrip()
    elif (tagged := _RANK_TAG.search(stripped, 0, RANK_TAG_REACH)) is not None:
        named = int(next(group for group in tagged.groups() if group is not None))
    if source.rank is not None:
        return source.rank, stripped if prefix is not None else line
    if named is not None:
        return named, stripped
    return source.label, line


MESSAGE_LINES = 3  # lines below an exception's line read as the rest of its message
_ENDS_SENTENCE = re.compile(r"[.!?:;)\]}>]\s*$")
# A line that goes on with a message: it starts like prose, not like a log record, a traceback's
# frame (indented), a prefixed rank's line or another exception.
_GOES_ON = re.compile(
    r"^(?!Traceback|During handling|The above exception|(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\b"
    r"|[IWEF]\d{4} )[A-Za-z0-9`'\"]"
)
_ASSERT = re.compile(r"(?:^|\s\s)assert\s{1,8}(?P<check>\S.{0,300}?)\s*$")


def message_around(chunk: bytes, start: int, end: int) -> tuple[str, str]:
    """Of the exception line ``chunk[start:end]``: the condition of the ``assert`` statement a
    bare ``AssertionError`` comes from (the traceback shows it on a line just above), and the
    lines that continue its message where the message was wrapped (its line ends mid-sentence),
    without the prefix its line has, if they repeat it. Only :data:`NEAR` bytes either side are
    looked at."""
    line = chunk[start : min(end, start + LINE_LIMIT)].decode("utf-8", "replace").rstrip("\r")
    check = ""
    name = exception_name(line)
    if name is not None and name.endswith("AssertionError") and line.rstrip(" :").endswith(name):
        before = chunk[max(0, start - NEAR) : start].decode("utf-8", "replace").split("\n")
        for above in reversed(before[-4:-1]):
            if (found := _ASSERT.search(printable(above.rstrip("\r")))) is not None:
                check = found.group("check")
                break
    more: list[str] = []
    after = chunk[end : end + NEAR].decode("utf-8", "replace").split("\n")[1 : 1 + MESSAGE_LINES]
    # the prefix a launcher puts before every line of the rank ("[rank0]: ", vLLM's worker tag)
    prefix = line[: line.find(name)] if name is not None else ""
    last = line
    for raw in after:
        below = printable(raw.rstrip("\r"))
        if prefix and below.startswith(prefix):
            below = below[len(prefix) :]
        if _ENDS_SENTENCE.search(last) or not _GOES_ON.match(below) or exception_name(below):
            break
        more.append(below.strip())
        last = below
    return check, " ".join(more)


def time_near(chunk: bytes, start: int, end: int, year: int) -> float | None:
    """The time of the line ``chunk[start:end]``, which has no stamp: the first stamp in the few
    lines after it (torch_npu prints ``[ERROR] <time> ...`` under the error), else the last one
    before it (the rank was alive then)."""
    after = chunk[end : end + NEAR].decode("utf-8", "replace").splitlines()[1:8]
    before = chunk[max(0, start - NEAR) : start].decode("utf-8", "replace").splitlines()
    for line in (*after, *reversed(before)):
        when = timestamps.line_time(line, year)
        if when is not None:
            return when
    return None
