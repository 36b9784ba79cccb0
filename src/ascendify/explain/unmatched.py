"""A verdict for a failed run whose logs match no catalogue entry.

Every failed run gets one. The failing rank comes from the launcher's summary (the rank it saw
fail first, else the first rank that exited non-zero or by a signal the launcher did not send);
without a summary, the first rank whose log ends with an error. From the end of that rank's log
(its last :data:`TAIL_BYTES`): the innermost exception of its last traceback, which is the one
Python prints first in a chain ("During handling of the above exception..." or "The above
exception was the direct cause..."), with the exception that wrapped it; else the last line that
looks like an error (argparse's ``prog: error: ...``); and its last :data:`TAIL_LINES` lines.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ascendify.explain.sources import Inputs, Source, open_regular
from ascendify.terminal_text import printable, printable_path

TAIL_BYTES = 64 * 1024
TAIL_LINES = 20
_TRACEBACK = "Traceback (most recent call last):"
_CHAINED = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
_ERROR_WORDS = re.compile(
    r"\b(?:error|fatal|failed|failure|exception|aborted|killed|segmentation fault|core dumped)\b",
    re.IGNORECASE,
)
_RANK_PREFIX = re.compile(r"^\[rank ?\d{1,6}\]: ?")


@dataclass(frozen=True)
class Unmatched:
    """What is known of the failing rank when no catalogue entry matched."""

    who: int | str
    exit_code: int | None
    signal: str | None
    error: str | None  # the innermost exception, else the last error-looking line
    exception: str | None  # that exception's name, when it is one
    wrapper: str | None  # the exception the innermost one was chained into, when not itself
    last_lines: tuple[str, ...]
    path: Path | None
    time: float | None

    @property
    def how(self) -> str:
        """``exit code 2``, ``killed by SIGSEGV``, or ``exit status unknown``."""
        if self.signal:
            return f"killed by {self.signal}"
        return "exit status unknown" if self.exit_code is None else f"exit code {self.exit_code}"

    @property
    def headline(self) -> str:
        return self.error or self.how

    def to_json(self) -> dict[str, Any]:
        return {
            "rank": self.who,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "error": self.error,
            "exception": self.exception,
            "wrapper": self.wrapper,
            "last_lines": list(self.last_lines),
            "path": None if self.path is None else printable_path(self.path),
        }


def unmatched(inputs: Inputs) -> Unmatched | None:
    """The failing rank of a run the catalogue found nothing in, or None when nothing failed."""
    for summary in inputs.summaries:
        found = _from_summary(summary, inputs.sources)
        if found is not None:
            return found
    if inputs.summaries:
        return None  # the launcher saw every rank succeed
    for source in sorted(inputs.sources, key=_rank_order):
        tail = read_tail(source.path)
        if tail.error is not None:
            return _verdict(source.rank if source.rank is not None else source.label, tail)
    return None


def _from_summary(summary: dict[str, Any], sources: list[Source]) -> Unmatched | None:
    root = summary.get("root_cause")
    root = root if isinstance(root, dict) else {}
    ranks = summary.get("ranks")
    records = ranks if isinstance(ranks, dict) else {}
    rank = root.get("rank")
    if not (isinstance(rank, int) and rank >= 0):
        rank = next(
            (int(key) for key in sorted(records, key=_number) if _failed(records[key])), None
        )
    if rank is None:
        if root.get("error"):  # a node failed, or the job hung: no one rank did
            node = f"node {root.get('node_rank')}"
            return Unmatched(node, None, None, printable(str(root["error"])), None, None, (), None,
                             _number_or_none(root.get("time")))  # fmt: skip
        return None
    record = records.get(str(rank))
    record = record if isinstance(record, dict) else {}
    log = next((s.path for s in sources if s.rank == rank and s.kind == "rank"), None)
    tail = read_tail(log) if log is not None else Tail((), None, None, None)
    when = _number_or_none(root.get("time")) if root.get("rank") == rank else None
    return _verdict(rank, tail, record, log, when)


def _verdict(
    who: int | str,
    tail: Tail,
    record: dict[str, Any] | None = None,
    path: Path | None = None,
    when: float | None = None,
) -> Unmatched:
    record = record or {}
    code = record.get("exit_code")
    signal = record.get("signal")
    return Unmatched(
        who=who,
        exit_code=code if isinstance(code, int) else None,
        signal=printable(signal) if isinstance(signal, str) else None,
        error=tail.error,
        exception=tail.exception,
        wrapper=tail.wrapper,
        last_lines=tail.lines,
        path=path,
        time=when,
    )


def _failed(record: Any) -> bool:
    if not isinstance(record, dict) or record.get("stopped_by_launcher"):
        return False
    return bool(record.get("signal")) or record.get("exit_code") not in (0, None)


def _number(key: str) -> int:
    return int(key) if str(key).isdigit() else 1 << 30


def _number_or_none(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _rank_order(source: Source) -> tuple[bool, int, str]:
    return source.rank is None, source.rank or 0, str(source.path)


@dataclass(frozen=True)
class Tail:
    lines: tuple[str, ...]
    error: str | None
    exception: str | None
    wrapper: str | None


def read_tail(path: Path) -> Tail:
    """The last lines of a log and the error they end with (nothing for a log that cannot be
    read as a regular file)."""
    try:
        with open_regular(path) as handle:
            size = os.fstat(handle.fileno()).st_size
            handle.seek(max(0, size - TAIL_BYTES))
            data = handle.read(TAIL_BYTES)
    except OSError:
        return Tail((), None, None, None)
    # Lines end at "\n" only: a "\r" is a terminal's overwrite, shown as an escape.
    lines = [printable(line) for line in data.decode("utf-8", "replace").split("\n")]
    if size > TAIL_BYTES:
        lines = lines[1:]  # the first one was cut
    shown = tuple(line for line in lines if line.strip())[-TAIL_LINES:]
    chain = innermost_chain([_RANK_PREFIX.sub("", line) for line in lines])
    if chain:
        return Tail(shown, chain[0], _name(chain[0]), chain[-1] if len(chain) > 1 else None)
    errors = [line.strip() for line in lines if _ERROR_WORDS.search(line)]
    return Tail(shown, errors[-1] if errors else None, None, None)


def innermost_chain(lines: list[str]) -> list[str]:
    """The exception lines of the last traceback in ``lines``, innermost first (the order Python
    prints a chain in); empty without a traceback."""
    chain: list[str] = []
    in_frames = False  # between "Traceback ..." and its exception line
    chained = False  # the last text seen was a chain's link line
    for line in lines:
        text = line.strip()
        if text == _TRACEBACK:
            if not chained:
                chain = []
            in_frames, chained = True, False
        elif text in _CHAINED:
            chained = True
        elif in_frames and text and not line[:1].isspace():
            chain.append(text)  # the first line after the frames that is not indented
            in_frames = False
        elif text and not in_frames:
            chained = False
    return chain


def _name(line: str) -> str | None:
    """``ValueError`` of ``ValueError: boom``; ``KeyboardInterrupt`` of itself."""
    name = line.split(":", 1)[0].strip()
    return name if name and all(part.isidentifier() for part in name.split(".")) else None
