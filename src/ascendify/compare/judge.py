"""Align two dumps record by record and find where they part (pure: records in, verdicts out).

Records are aligned by rank, step, kind, module path, call index and slot; a call one side made
and the other did not (a fused module, an extra evaluation) is reported, not judged. A record whose
outputs exceed their budget is

* ``diverged`` when the divergence starts there: its inputs still agree, no module call nested in
  it diverged, and nothing diverged in an earlier step (whose updated weights every later call
  inherits); a record without inputs (a loss, a gradient) diverges only when nothing before it did;
* ``inherited`` otherwise: it only carries a divergence that started earlier.

The first divergence is the earliest ``diverged`` record in execution order (step, then the order
in which calls ended, which puts a module before the module that called it).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ascendify.compare.metrics import Budget, PairMetrics, budget, stat_metrics, within, worst
from ascendify.compare.records import API, FORWARD, Key, Record, TensorStats
from ascendify.errors import AscendifyError

OK, DIVERGED, INHERITED, ONLY_A, ONLY_B = "ok", "diverged", "inherited", "only in A", "only in B"
FAILING = (DIVERGED, INHERITED)
# Dumps whose module paths share less than this are of different programs.
MIN_SHARED_PATHS = 0.5

Measure = Callable[[Record, TensorStats, Record, TensorStats], PairMetrics]


def measure_stats(a: Record, x: TensorStats, b: Record, y: TensorStats) -> PairMetrics:
    del a, b
    return stat_metrics(x, y)


@dataclass(frozen=True)
class TensorsVerdict:
    agree: bool
    worst: PairMetrics | None
    budget: Budget | None
    note: str = ""


@dataclass(frozen=True)
class Verdict:
    key: Key
    a: Record | None
    b: Record | None
    status: str
    outputs: TensorsVerdict | None = None
    inputs: TensorsVerdict | None = None

    @property
    def record(self) -> Record:
        found = self.a or self.b
        assert found is not None
        return found


@dataclass(frozen=True)
class Comparison:
    tolerance: str
    verdicts: tuple[Verdict, ...]  # execution order
    first: Verdict | None  # the first divergence
    notes: tuple[str, ...] = ()  # what the reader should know about the two runs
    runs: tuple[str, ...] = ()  # what was compared: each dump's folder and command, A then B

    @property
    def failed(self) -> bool:
        return any(verdict.status in FAILING for verdict in self.verdicts)

    def count(self, status: str) -> int:
        return sum(verdict.status == status for verdict in self.verdicts)


def _execution_order(record: Record) -> tuple[int, int, int]:
    return (record.step, record.order, record.rank)


def check_same_program(a: Sequence[Record], b: Sequence[Record]) -> None:
    paths_a = {r.path for r in a if r.kind == FORWARD}
    paths_b = {r.path for r in b if r.kind == FORWARD}
    if not paths_a or not paths_b:
        empty = "A" if not paths_a else "B"
        raise AscendifyError(f"dump {empty} holds no module call; nothing to compare")
    shared = len(paths_a & paths_b)
    if shared < MIN_SHARED_PATHS * max(len(paths_a), len(paths_b)):
        only_a, only_b = sorted(paths_a - paths_b), sorted(paths_b - paths_a)
        raise AscendifyError(
            f"dumps of different programs: {shared} module paths shared, A alone has "
            f"{len(only_a)} (e.g. {only_a[0]!r}), B alone {len(only_b)} (e.g. {only_b[0]!r})"
        )


def compare_tensors(
    a: Record, xs: Sequence[TensorStats], b: Record, ys: Sequence[TensorStats],
    *, tolerance: str, measure: Measure,
) -> TensorsVerdict:  # fmt: skip
    if len(xs) != len(ys):
        return TensorsVerdict(False, None, None, f"{len(xs)} tensors against {len(ys)}")
    judged = []
    agree = True
    for x, y in zip(xs, ys, strict=True):
        metrics = measure(a, x, b, y)
        allowed = budget(tolerance, x.dtype, y.dtype)
        agree = within(metrics, tolerance, allowed) and agree
        judged.append((metrics, allowed))
    pick = worst([metrics for metrics, _ in judged])
    allowed_for_worst = next((bud for m, bud in judged if m is pick), None)
    return TensorsVerdict(agree, pick, allowed_for_worst)


def judge(
    a: Iterable[Record], b: Iterable[Record], tolerance: str, measure: Measure = measure_stats
) -> Comparison:
    records_a, records_b = sorted(a, key=_execution_order), list(b)
    check_same_program(records_a, records_b)
    ranks_a, ranks_b = {r.rank for r in records_a}, {r.rank for r in records_b}
    if ranks_a != ranks_b:
        raise AscendifyError(f"dump A has ranks {sorted(ranks_a)}, dump B {sorted(ranks_b)}")
    by_key = {record.key: record for record in records_b}
    verdicts: list[Verdict] = []
    failures: dict[tuple[int, int], list[Record]] = defaultdict(list)  # by rank and step
    first_failing_step: dict[int, int] = {}
    for record in records_a:
        other = by_key.pop(record.key, None)
        if other is None:
            verdicts.append(Verdict(record.key, record, None, ONLY_A))
            continue
        outputs = compare_tensors(
            record, record.outputs, other, other.outputs, tolerance=tolerance, measure=measure
        )
        inputs = compare_tensors(
            record, record.inputs, other, other.inputs, tolerance=tolerance, measure=measure
        )
        if outputs.agree:
            verdicts.append(Verdict(record.key, record, other, OK, outputs, inputs))
            continue
        status = _failing_status(record, inputs, failures, first_failing_step)
        failures[(record.rank, record.step)].append(record)
        first_failing_step.setdefault(record.rank, record.step)
        verdicts.append(Verdict(record.key, record, other, status, outputs, inputs))
    verdicts += [
        Verdict(key, None, record, ONLY_B)
        for key, record in sorted(by_key.items(), key=lambda item: _execution_order(item[1]))
    ]
    origins = [verdict for verdict in verdicts if verdict.status == DIVERGED]
    first = origins[0] if origins else next((v for v in verdicts if v.status in FAILING), None)
    return Comparison(tolerance, tuple(verdicts), first)


def _failing_status(
    record: Record,
    inputs: TensorsVerdict,
    failures: dict[tuple[int, int], list[Record]],
    first_failing_step: dict[int, int],
) -> str:
    earlier_step = first_failing_step.get(record.rank, record.step) < record.step
    this_step = failures[(record.rank, record.step)]
    if record.kind in (FORWARD, API) and record.inputs:
        nested = any(record.encloses(failed) for failed in this_step)
        origin = inputs.agree and not nested and not earlier_step
    else:
        origin = not earlier_step and not this_step
    return DIVERGED if origin else INHERITED
