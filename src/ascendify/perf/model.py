"""What ``ascendify perf`` knows about each rank: a small summary, whatever the trace's size.

Every reader (kineto JSON, Ascend's profiler folders, msprof-analyze's cluster output) turns its
input into one :class:`RankProfile` per rank; the verdict and the reports read only these, so 64
ranks cost 64 small summaries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ascendify.errors import AscendifyError
from ascendify.perf.intervals import Split

US_PER_MS = 1000.0
# The name prefix of the ranges ``--profile`` puts around each top-level module's call.
MODULE_RANGE = "ascendify.module: "


class UnusableTrace(AscendifyError):
    """One rank's input that cannot be analysed; the other ranks still are."""


@dataclass(frozen=True)
class StepSplit:
    """One step of one rank, in milliseconds, with Ascend's meanings (docs/perf.md):
    ``step_ms == computing + communication_not_overlapped + free + preparing``."""

    step: int
    step_ms: float
    computing_ms: float
    communication_not_overlapped_ms: float
    overlapped_ms: float
    free_ms: float
    preparing_ms: float

    @property
    def communication_ms(self) -> float:
        return self.communication_not_overlapped_ms + self.overlapped_ms

    @property
    def working_ms(self) -> float:
        """The step less the time spent waiting in communication: what the rank itself took."""
        return self.step_ms - self.communication_not_overlapped_ms

    @classmethod
    def from_split(cls, step: int, split: Split, per_ms: float = US_PER_MS) -> StepSplit:
        return cls(
            step=step,
            step_ms=split.step / per_ms,
            computing_ms=split.computing / per_ms,
            communication_not_overlapped_ms=split.communication_not_overlapped / per_ms,
            overlapped_ms=split.overlapped / per_ms,
            free_ms=split.free / per_ms,
            preparing_ms=split.preparing / per_ms,
        )


@dataclass(frozen=True)
class Link:
    """Traffic between two ranks (or, where the trace names no peer, one rank's traffic over a
    transport), summed over the profiled steps."""

    source: int
    destination: int | None
    transport: str
    megabytes: float
    milliseconds: float

    @property
    def bandwidth_gb_s(self) -> float:
        return self.megabytes / self.milliseconds if self.milliseconds > 0 else 0.0

    @property
    def name(self) -> str:
        peer = f"-{self.destination}" if self.destination is not None else ""
        return f"{self.source}{peer} {self.transport}"


@dataclass
class Totals:
    """Time and calls of operators or modules, by name, over the profiled steps."""

    microseconds: dict[str, float] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)

    def add(self, name: str, duration: float) -> None:
        self.microseconds[name] = self.microseconds.get(name, 0.0) + duration
        self.calls[name] = self.calls.get(name, 0) + 1


@dataclass(frozen=True)
class RankProfile:
    rank: int
    source: Path
    format: str  # "kineto", "ascend", "cluster"
    steps: tuple[StepSplit, ...]
    timeline: str = ""  # what "computing" was measured on: device kernels, or the host thread
    step_start_us: float | None = None  # the first step's start (absolute), to compare clocks
    links: tuple[Link, ...] = ()
    operators: Totals = field(default_factory=Totals)
    modules: Totals = field(default_factory=Totals)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Problem:
    """Why one rank (or one input) was left out, in one line."""

    source: Path
    message: str
    rank: int | None = None

    def line(self) -> str:
        who = f"rank {self.rank}" if self.rank is not None else str(self.source)
        return f"{who}: {self.message}"
