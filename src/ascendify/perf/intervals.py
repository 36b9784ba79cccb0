"""Busy time on a timeline: unions of intervals, and a step's split into Ascend's parts.

A trace gives, per rank, the intervals in which the device (or, on a CPU-only trace, the thread
that runs the program) computed and those in which it communicated. :func:`split_step` cuts them
to one step and measures what ``step_trace_time.csv`` reports: computing, communication not
overlapped by computing, overlapped communication, preparing (step start to the first activity)
and free (the rest). The parts add up to the step exactly.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass


class Timeline:
    """Intervals appended in any order; those that touch the last one are merged as they come,
    so a thread's or a stream's events (written in time order) take one slot per busy stretch."""

    def __init__(self) -> None:
        self._starts = array("d")
        self._ends = array("d")
        self._ordered = True

    def add(self, start: float, end: float) -> None:
        if end <= start:
            return
        if self._starts:
            last_start, last_end = self._starts[-1], self._ends[-1]
            if last_start <= start <= last_end:
                if end > last_end:
                    self._ends[-1] = end
                return
            if start < last_start:
                self._ordered = False
        self._starts.append(start)
        self._ends.append(end)

    def __len__(self) -> int:
        return len(self._starts)

    def merged(self) -> Busy:
        """The union, as disjoint intervals in time order."""
        pairs = zip(self._starts, self._ends, strict=True)
        ordered = pairs if self._ordered else iter(sorted(pairs))
        starts, ends = array("d"), array("d")
        for start, end in ordered:
            if ends and start <= ends[-1]:
                ends[-1] = max(ends[-1], end)
            else:
                starts.append(start)
                ends.append(end)
        return Busy(starts, ends)


@dataclass(frozen=True)
class Busy:
    """Disjoint intervals in time order."""

    starts: array[float]
    ends: array[float]

    def clip(self, start: float, end: float) -> list[tuple[float, float]]:
        first = bisect_right(self.ends, start)
        last = bisect_left(self.starts, end)
        return [(max(self.starts[i], start), min(self.ends[i], end)) for i in range(first, last)]


@dataclass(frozen=True)
class Split:
    """One step's parts, in the trace's time unit."""

    step: float
    computing: float
    communication_not_overlapped: float
    overlapped: float
    free: float
    preparing: float


def split_step(computing: Busy, communication: Busy, start: float, end: float) -> Split:
    compute = computing.clip(start, end)
    communicate = communication.clip(start, end)
    overlapped = _overlap(compute, communicate)
    busy = _length(compute) + _length(communicate) - overlapped
    first = min((spans[0][0] for spans in (compute, communicate) if spans), default=end)
    preparing = first - start if busy else 0.0
    return Split(
        step=end - start,
        computing=_length(compute),
        communication_not_overlapped=_length(communicate) - overlapped,
        overlapped=overlapped,
        free=(end - start) - busy - preparing,
        preparing=preparing,
    )


def _length(spans: list[tuple[float, float]]) -> float:
    return sum(end - start for start, end in spans)


def _overlap(a: list[tuple[float, float]], b: list[tuple[float, float]]) -> float:
    total, i, j = 0.0, 0, 0
    while i < len(a) and j < len(b):
        low, high = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if low < high:
            total += high - low
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total
