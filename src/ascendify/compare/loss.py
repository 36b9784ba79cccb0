"""Two runs' loss curves, aligned by step and judged by the rule porters use to accept a port.

The rule (verl, OpenRLHF and Ascend's own model pages publish it): the mean relative error of the
loss over the compared steps is below 2 %, with the largest relative error shown beside it. A
relative error is ``|b - a| / |a|`` per step, A being the reference.

A loss series comes from what users have: a ``compare dump`` folder (the loss records, the tensor
``backward()`` was called on), a ``job metrics --csv`` file, a job's metrics file, or a plain log
(read with the job metric rules, so ``loss: 1.23``, ``| loss 8.88 |`` and tqdm lines all count).
Pure reading and judging; no torch.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ascendify.compare.records import MANIFEST, load_dump
from ascendify.errors import AscendifyError
from ascendify.jobs.metrics import MetricParser, parse_lines, read_series

LOSS = "loss"
DEFAULT_MAX_MEAN_REL = 0.02  # the published acceptance rule: mean relative error < 2 %
_CSV_HEADER = ["name", "rank", "step", "value", "time"]  # what `job metrics --csv` writes
_LOG_CHUNK = 1 << 20  # a log is read a MiB at a time, whole lines only


@dataclass(frozen=True)
class LossCurve:
    source: str
    steps: tuple[int, ...]  # the printed step, else the point's position
    values: tuple[float, ...]
    stepped: bool  # whether steps were printed (else they are positions)


@dataclass(frozen=True)
class StepError:
    step: int
    a: float
    b: float
    relative: float


@dataclass(frozen=True)
class LossVerdict:
    a: LossCurve
    b: LossCurve
    errors: tuple[StepError, ...]  # per compared step, in step order
    max_mean_rel: float
    max_rel: float | None

    @property
    def mean_relative(self) -> float:
        if not self.errors:
            return math.inf
        return math.fsum(e.relative for e in self.errors) / len(self.errors)

    @property
    def worst(self) -> StepError | None:
        return max(self.errors, key=lambda e: e.relative, default=None)

    @property
    def first_past(self) -> StepError | None:
        """The first step whose relative error is past the per-step limit (``max_rel``, else the
        mean's limit): where the curves start to part."""
        limit = self.max_mean_rel if self.max_rel is None else self.max_rel
        return next((e for e in self.errors if e.relative > limit), None)

    @property
    def passed(self) -> bool:
        worst = self.worst
        return (
            bool(self.errors)
            and self.mean_relative <= self.max_mean_rel
            and (self.max_rel is None or (worst is not None and worst.relative <= self.max_rel))
        )


def relative_error(a: float, b: float) -> float:
    if not (math.isfinite(a) and math.isfinite(b)):
        return 0.0 if a == b else math.inf  # the same inf on both sides agrees; NaN never does
    if a == b:
        return 0.0
    return abs(b - a) / abs(a) if a != 0 else math.inf


def _curve(source: str, points: Iterable[tuple[int | None, float]]) -> LossCurve:
    """A curve from (step or None, value) points in printed order. A step printed again (a run
    that restarted from a checkpoint replays steps) keeps its last value; without printed steps
    the points are numbered in order."""
    listed = list(points)
    if not listed:
        raise AscendifyError(f"{source}: no loss found")
    stepped = all(step is not None for step, _ in listed)
    by_step: dict[int, float] = {}
    for position, (step, value) in enumerate(listed):
        by_step[step if stepped and step is not None else position] = value
    steps = tuple(sorted(by_step))
    return LossCurve(source, steps, tuple(by_step[s] for s in steps), stepped)


def _from_dump(directory: Path, rank: int) -> LossCurve:
    dump = load_dump(directory)
    if rank not in dump.ranks:
        raise AscendifyError(f"{directory}: no rank {rank} in this dump (ranks {dump.ranks})")
    per_step: dict[int, list[float]] = {}
    for record in dump.records:
        if record.kind == LOSS and record.rank == rank and record.outputs:
            per_step.setdefault(record.step, []).append(record.outputs[0].mean)
    # Gradient accumulation calls backward() several times a step: the step's loss is their mean.
    points = [(step, math.fsum(v) / len(v)) for step, v in sorted(per_step.items())]
    return _curve(str(directory), points)


def _from_csv(path: Path, rank: int) -> Iterator[tuple[int | None, float]]:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = csv.reader(handle)
        for row in rows:
            if row == _CSV_HEADER or len(row) != len(_CSV_HEADER):
                continue
            name, row_rank, step, value = row[:4]
            if name == LOSS and row_rank == str(rank):
                yield (int(step) if step else None, float(value))


def _from_log(path: Path, rank: int) -> Iterator[tuple[int | None, float]]:
    """The loss points a plain log prints, read in bounded chunks of whole lines."""
    parser = MetricParser()
    with path.open("rb") as handle:
        rest = b""
        while chunk := handle.read(_LOG_CHUNK):
            lines, _, rest = (rest + chunk).rpartition(b"\n")
            yield from _loss_points(parser, rank, lines)
        yield from _loss_points(parser, rank, rest)


def _loss_points(
    parser: MetricParser, rank: int, data: bytes
) -> Iterator[tuple[int | None, float]]:
    for point in parse_lines(parser, rank, data, 0.0):
        if point.name == LOSS:
            yield (point.step, point.value)


def is_metrics_file(path: Path) -> bool:
    """Whether ``path`` is a job's stored metrics file (tab-separated points)."""
    with path.open("rb") as handle:
        first = handle.readline(4096)
    return first.count(b"\t") == 4


def read_curve(path: Path, rank: int = 0) -> LossCurve:
    """The loss curve of ``rank`` in a dump folder, a metrics CSV, a job's metrics file or a log."""
    if path.is_dir():
        if not (path / MANIFEST).is_file():
            raise AscendifyError(f"{path}: a folder, but not a compare dump (no {MANIFEST})")
        return _from_dump(path, rank)
    if not path.is_file():
        raise AscendifyError(f"{path}: no such file, folder or job")
    try:
        if is_metrics_file(path):
            series = read_series(path, LOSS, rank)
            points = list(zip(series[0].steps, series[0].values, strict=True)) if series else []
        elif path.suffix == ".csv":
            points = list(_from_csv(path, rank))
        else:
            points = list(_from_log(path, rank))
    except (OSError, ValueError) as error:
        raise AscendifyError(f"{path}: cannot read a loss series ({error})") from None
    return _curve(str(path), points)


def judge_losses(
    a: LossCurve,
    b: LossCurve,
    max_mean_rel: float = DEFAULT_MAX_MEAN_REL,
    max_rel: float | None = None,
) -> LossVerdict:
    """The two curves at the steps both have (by position when either printed no steps)."""
    if not (max_mean_rel >= 0 and (max_rel is None or max_rel >= 0)):
        raise AscendifyError("--max-mean-rel and --max-rel are fractions >= 0 (0.02 for 2 %)")
    if a.stepped and b.stepped:
        b_values = dict(zip(b.steps, b.values, strict=True))
        pairs = [
            (s, v, b_values[s]) for s, v in zip(a.steps, a.values, strict=True) if s in b_values
        ]
    else:
        pairs = [(i, x, y) for i, (x, y) in enumerate(zip(a.values, b.values, strict=False))]
    if not pairs:
        raise AscendifyError(f"{a.source} and {b.source} share no step to compare")
    errors = tuple(StepError(s, x, y, relative_error(x, y)) for s, x, y in pairs)
    return LossVerdict(a, b, errors, max_mean_rel, max_rel)


def verdict_lines(verdict: LossVerdict) -> list[str]:
    """What the console shows: the compared range, the two errors, where the curves part, the
    verdict."""
    errors = verdict.errors
    unit = "step" if verdict.a.stepped and verdict.b.stepped else "point"
    worst = verdict.worst
    assert worst is not None
    lines = [
        f"compared {len(errors)} {unit}s ({unit} {errors[0].step} to {errors[-1].step}) of "
        f"{verdict.b.source} against {verdict.a.source}",
        f"mean relative error {verdict.mean_relative:.4%} (limit {verdict.max_mean_rel:.2%}); "
        f"max relative error {worst.relative:.4%} at {unit} {worst.step} "
        f"({worst.a:.6g} vs {worst.b:.6g})"
        + ("" if verdict.max_rel is None else f" (limit {verdict.max_rel:.2%})"),
    ]
    past = verdict.first_past
    if past is not None:
        lines.append(
            f"first {unit} past {verdict.max_rel or verdict.max_mean_rel:.2%}: {past.step} "
            f"({past.a:.6g} vs {past.b:.6g}, {past.relative:.4%})"
        )
    lines.append("loss curves agree" if verdict.passed else "loss curves differ")
    return lines
