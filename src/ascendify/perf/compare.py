"""``ascendify perf compare A B``: two runs side by side (an NPU run and its GPU run, or before and
after a change): the step time and throughput per card, then the modules and the operators that
take the most time more (or less) per step, with the ratio B / A.

Operators are matched across vendors' names through ``operators.json`` (``aten::mm``, a CUDA
GEMM kernel, ``aclnnMatmul`` and ``MatMulV2`` are all ``matmul``); a name the table does not know
is matched with itself. Times are per step and per card: the totals of every rank divided by the
ranks and by the profiled steps, so runs of different sizes compare.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from statistics import median
from typing import Any

from ascendify.perf.model import Totals
from ascendify.perf.report import Analysis, analyse

TOP_ROWS = 15


@dataclass(frozen=True)
class Gap:
    name: str
    a_ms: float  # per step and card
    b_ms: float

    @property
    def gap_ms(self) -> float:
        return self.b_ms - self.a_ms

    @property
    def ratio(self) -> float | None:
        return self.b_ms / self.a_ms if self.a_ms > 0 else None


@dataclass(frozen=True)
class Comparison:
    a: Analysis
    b: Analysis
    a_step_ms: float
    b_step_ms: float
    modules: tuple[Gap, ...]
    operators: tuple[Gap, ...]


@cache
def _operator_table() -> tuple[tuple[str, re.Pattern[str]], ...]:
    text = resources.files("ascendify.perf").joinpath("operators.json").read_text("utf-8")
    table: dict[str, Any] = json.loads(text)
    return tuple(
        (name, re.compile("|".join(f"(?:{pattern})" for pattern in patterns), re.IGNORECASE))
        for name, patterns in table.items()
        if not name.startswith("_")
    )


def common_name(operator: str) -> str:
    """The name an operator is compared under: the table's, else its own."""
    for name, pattern in _operator_table():
        if pattern.search(operator):
            return name
    return operator


def compare_runs(a: str, b: str) -> Comparison:
    first, second = analyse(a), analyse(b)
    return Comparison(
        first,
        second,
        _step_ms(first),
        _step_ms(second),
        _gaps(_per_step(first, "modules", str), _per_step(second, "modules", str)),
        _gaps(
            _per_step(first, "operators", common_name), _per_step(second, "operators", common_name)
        ),
    )


def _step_ms(analysis: Analysis) -> float:
    return median(summary.step_ms for summary in analysis.summaries)


def _per_step(analysis: Analysis, kind: str, naming: Any) -> dict[str, float]:
    """Milliseconds per step and card of each module or operator (by its compared name)."""
    steps = sum(len(profile.steps) for profile in analysis.profiles)
    merged: dict[str, float] = {}
    for profile in analysis.profiles:
        totals: Totals = getattr(profile, kind)
        for name, microseconds in totals.microseconds.items():
            key = naming(name)
            merged[key] = merged.get(key, 0.0) + microseconds
    return {name: us / 1000 / steps for name, us in merged.items()}


def _gaps(a: dict[str, float], b: dict[str, float]) -> tuple[Gap, ...]:
    rows = [Gap(name, a.get(name, 0.0), b.get(name, 0.0)) for name in a.keys() | b.keys()]
    return tuple(sorted(rows, key=lambda gap: (-abs(gap.gap_ms), gap.name)))


def to_json(comparison: Comparison) -> dict[str, Any]:
    def rows(gaps: tuple[Gap, ...]) -> list[dict[str, Any]]:
        return [
            {"name": g.name, "a_ms": round(g.a_ms, 4), "b_ms": round(g.b_ms, 4),
             "gap_ms": round(g.gap_ms, 4), "ratio": None if g.ratio is None else round(g.ratio, 3)}
            for g in gaps
        ]  # fmt: skip

    return {
        "a": _run_json(comparison.a, comparison.a_step_ms),
        "b": _run_json(comparison.b, comparison.b_step_ms),
        "step_ratio": round(comparison.b_step_ms / comparison.a_step_ms, 3)
        if comparison.a_step_ms
        else None,
        "modules": rows(comparison.modules),
        "operators": rows(comparison.operators),
    }


def _run_json(analysis: Analysis, step_ms: float) -> dict[str, Any]:
    return {
        "ranks": len(analysis.profiles),
        "step_ms": round(step_ms, 4),
        "steps_per_second_per_card": round(1000 / step_ms, 3) if step_ms > 0 else None,
        "verdict": analysis.verdict.sentence,
    }


def render(comparison: Comparison) -> str:
    a, b = comparison.a_step_ms, comparison.b_step_ms
    ratio = f"{b / a:.2f}x" if a > 0 else "n/a"
    lines = [
        f"step per card: A {a:.2f} ms ({1000 / a if a else 0:.2f} steps/s), "
        f"B {b:.2f} ms ({1000 / b if b else 0:.2f} steps/s): B takes {ratio} A's time",
        f"A: {len(comparison.a.profiles)} rank(s), {comparison.a.verdict.sentence}",
        f"B: {len(comparison.b.profiles)} rank(s), {comparison.b.verdict.sentence}",
    ]
    for title, gaps in (("modules", comparison.modules), ("operators", comparison.operators)):
        if not gaps:
            continue
        lines += ["", f"{title} by time gap (ms per step and card; B / A):"]
        lines.append(f"{'A':>10} {'B':>10} {'gap':>10} {'ratio':>7}  name")
        for gap in gaps[:TOP_ROWS]:
            shown = f"{gap.ratio:.2f}" if gap.ratio is not None else "new"
            name = gap.name if len(gap.name) <= 90 else gap.name[:87] + "..."
            lines.append(
                f"{gap.a_ms:>10.3f} {gap.b_ms:>10.3f} {gap.gap_ms:>+10.3f} {shown:>7}  {name}"
            )
    return "\n".join(lines)
