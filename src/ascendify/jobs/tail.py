"""The job runner's metric reader: it tails every rank's log file as the launcher writes it and
appends the points found to the job's ``metrics.tsv``.

It runs in a thread of the job runner, never in the ranks' write path: a rank writes to its pipe,
the launcher to the file, and this thread reads the file some time later (every
:data:`POLL_SECONDS`), a chunk at a time, until it has read all there is: a rank that prints
faster than the reader parses is read late, never in part. A line longer than :data:`CHUNK` is
skipped with a note in the runner's log. TensorBoard event files the ranks write into the job's
output or working folders are read as well when the ``tensorboard`` extra is installed.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ascendify.jobs.layout import JobLayout
from ascendify.jobs.metrics import LINE_BREAKS, MetricParser, Point, append_points, parse_lines

POLL_SECONDS = 1.0
TB_POLL_SECONDS = 5.0
CHUNK = 4 << 20  # bytes parsed at a time; a longer line is skipped
TB_PREFIX = "events.out.tfevents."
TB_RANK = -1  # TensorBoard points are the job's, not one rank's
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")  # in a series name: stored and shown escaped
_SKIPPED_DIRS = frozenset({"inputs", "code", ".git", "__pycache__"})  # staged data can be huge


@dataclass
class _LogFile:
    rank: int
    path: Path
    offset: int = 0
    last_step: dict[str, int | None] = field(default_factory=dict)
    skipping: bool = False  # inside a line longer than CHUNK: read on to its end


class MetricsTail:
    """Tails the rank logs of one job; :meth:`poll` reads what is new, :meth:`run` loops."""

    def __init__(
        self,
        logs: Iterable[tuple[int, Path]],
        out: Path,
        parser: MetricParser,
        tb_dirs: Iterable[Path] = (),
    ) -> None:
        self._logs = [_LogFile(rank, path) for rank, path in logs]
        self._out = out
        self._parser = parser
        self._tb = TensorBoardReader(list(tb_dirs))

    @classmethod
    def for_job(cls, layout: JobLayout, spec: Any, parser: MetricParser) -> MetricsTail:
        """The tail of a job's ranks (``spec`` is its :class:`~ascendify.jobs.spec.JobSpec`)."""
        logs = [
            (node * spec.cards + device, layout.rank_log(node * spec.cards + device, device))
            for node in range(spec.nodes)
            for device in range(spec.cards)
        ]
        tb_dirs = [layout.workdir(node) for node in range(spec.nodes)]
        if spec.train_url and "://" not in spec.train_url:
            tb_dirs.append(Path(spec.train_url))
        return cls(logs, layout.metrics, parser, tb_dirs)

    def position(self) -> int:
        """The bytes of the rank logs read so far: it grows while the reader moves on."""
        return sum(log.offset for log in self._logs)

    def poll(self, final: bool = False) -> int:
        """Read all the logs gained since the last poll; returns the number of points added.

        A chunk of each log at a time, in turns, until every log is read to its end: points are
        written chunk by chunk, so memory stays bounded however far behind the reader is.
        """
        now = time.time()
        added = 0
        reading = self._logs
        while reading:
            points: list[Point] = []
            unfinished = []
            for log in reading:
                found, more = self._read(log, now, final)
                points += found
                if more:
                    unfinished.append(log)
            append_points(self._out, points)
            added += len(points)
            reading = unfinished
        points = self._tb.poll(now)
        append_points(self._out, points)
        return added + len(points)

    def run(self, stop: threading.Event) -> None:
        """Poll until ``stop`` is set, then read what is left (the last lines of every rank)."""
        next_tb = 0.0
        while not stop.wait(POLL_SECONDS):
            self._tb.due = time.monotonic() >= next_tb
            if self._tb.due:
                next_tb = time.monotonic() + TB_POLL_SECONDS
            self.poll()
        self._tb.due = True
        self.poll(final=True)

    def _read(self, log: _LogFile, now: float, final: bool) -> tuple[list[Point], bool]:
        """The points of the next chunk of ``log``, and whether there may be more to read."""
        try:
            with log.path.open("rb") as handle:
                handle.seek(log.offset)
                chunk = handle.read(CHUNK)
        except FileNotFoundError:
            return [], False
        full = len(chunk) == CHUNK
        # Complete lines only (a line ends at "\n", or "\r" where tqdm redraws), but all at the end.
        end = max(chunk.rfind(b"\n"), chunk.rfind(b"\r")) + 1
        if log.skipping:
            return self._skip(log, chunk, full)
        if end == 0 and full:  # one line fills the chunk: too long to be a metric line
            print(
                f"ascendify job: metrics: rank {log.rank}: a line longer than {CHUNK} bytes at byte "
                f"{log.offset} of {log.path.name} is skipped",
                flush=True,
            )
            log.skipping = True
            return self._skip(log, chunk, full)
        if final and not full:
            end = len(chunk)
        if end == 0:
            return [], False
        log.offset += end
        points = parse_lines(self._parser, log.rank, chunk[:end], now)
        return _new_steps(points, log.last_step), full

    @staticmethod
    def _skip(log: _LogFile, chunk: bytes, full: bool) -> tuple[list[Point], bool]:
        """Pass over the rest of a too long line: up to its line break, else the whole chunk."""
        ending = LINE_BREAKS.search(chunk)
        if ending is None:
            log.offset += len(chunk)
            return [], full
        log.offset += ending.end()
        log.skipping = False
        return [], True


def _new_steps(points: list[Point], last_step: dict[str, int | None]) -> list[Point]:
    """Drop a point whose step is the one its series already has: tqdm redraws the same step."""
    kept = []
    for point in points:
        if point.step is not None and last_step.get(point.name) == point.step:
            continue
        last_step[point.name] = point.step
        kept.append(point)
    return kept


class TensorBoardReader:
    """Scalars of the event files below some folders (needs the ``tensorboard`` extra)."""

    def __init__(self, roots: list[Path]) -> None:
        self._roots = roots
        self._loaders: dict[Path, Any] = {}
        self.due = True
        self.missing = False  # the extra is not installed: said once in the runner's log

    def poll(self, now: float) -> list[Point]:
        if not self._roots or not self.due:
            return []
        self.due = False
        files = [path for root in self._roots for path in _event_files(root)]
        if not files:
            return []
        try:
            from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
            from tensorboard.util.tensor_util import make_ndarray
        except ImportError:
            if not self.missing:
                self.missing = True
                print(
                    "ascendify job: TensorBoard event files found but not read: "
                    "pip install 'ascendify[tensorboard]'",
                    flush=True,
                )
            return []
        points = []
        for path in files:
            loader = self._loaders.setdefault(path, EventFileLoader(str(path)))
            for event in loader.Load():  # only the events written since the last call
                for value in event.summary.value:
                    with contextlib.suppress(ValueError, TypeError):
                        number = float(make_ndarray(value.tensor).item())
                        tag = _CONTROL.sub(_escaped, value.tag)  # a tab or line break: one field
                        points.append(Point(TB_RANK, tag, event.step, number, now))
        return points


def _escaped(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def _event_files(root: Path) -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIPPED_DIRS]
        found += [Path(folder) / name for name in files if name.startswith(TB_PREFIX)]
    return sorted(found)
