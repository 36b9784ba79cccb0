"""What a comparison shows: a table on the console, the first divergence, compare.csv/.xlsx/.html."""

from __future__ import annotations

import html
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ascendify._fs import output_file
from ascendify.compare.judge import (
    DIVERGED,
    FAILING,
    INHERITED,
    OK,
    ONLY_A,
    ONLY_B,
    Comparison,
    TensorsVerdict,
    Verdict,
)
from ascendify.compare.loss import LossVerdict, verdict_lines
from ascendify.compare.records import API, FORWARD
from ascendify.tabular import Row, write_csv, write_xlsx

HEADER = (
    "rank",
    "step",
    "kind",
    "module",
    "call",
    "slot",
    "status",
    "inputs agree",
    "error",
    "cosine",
    "max abs error",
    "relative error",
    "stat error",
    "budget",
    "dtype A",
    "dtype B",
    "shape",
    "note",
)
_SEVERITY = {DIVERGED: 4, INHERITED: 3, OK: 1, ONLY_A: 0, ONLY_B: 0}
_COLOURS = {OK: "#2e7d32", DIVERGED: "#c62828", INHERITED: "#ef6c00"}
TABLE_ROWS = 60


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.4g}"


def display_name(verdict: Verdict) -> str:
    record = verdict.record
    if record.kind in (FORWARD, API, record.path):
        return record.path
    return f"{record.path} [{record.kind}]"


def _what(verdict: Verdict) -> str:
    """A module by its path; an operator as "operator NAME in MODULE"."""
    record = verdict.record
    if record.kind == API:
        module, _, operator = record.path.rpartition(":")
        return f"operator {operator} in {module or 'no module'}"
    return display_name(verdict)


def metrics_text(outputs: TensorsVerdict | None) -> str:
    if outputs is None or outputs.worst is None:
        return outputs.note if outputs else "no metrics"
    worst = outputs.worst
    if worst.shape_differs:
        return "shapes differ"
    parts = []
    if worst.nonfinite_differs:
        parts.append("NaN/inf counts differ")
    if worst.cosine is not None:
        parts.append(f"cosine {worst.cosine:.6f}")
        parts.append(f"relative error {_number(worst.relative)}")
    parts.append(f"stat error {_number(worst.stat_error)}")
    parts.append(f"max abs error {_number(worst.max_abs)}")
    if outputs.budget is not None:
        parts.append(f"budget {outputs.budget.name} ({outputs.budget.relative:g})")
    return ", ".join(parts)


def first_divergence_line(comparison: Comparison) -> str | None:
    first = comparison.first
    if first is None:
        return None
    record = first.record
    where = f"step {record.step}, call {record.call}"
    ranks = {verdict.record.rank for verdict in comparison.verdicts}
    if len(ranks) > 1:
        where += f", rank {record.rank}"
    line = f"first divergence: {_what(first)} ({where}): {metrics_text(first.outputs)}"
    if first.status == INHERITED:
        line += (
            " (its inputs differ already: the data, code outside any module, or an earlier "
            "module within a looser dtype's budget)"
        )
    return line


@dataclass
class _Summary:
    name: str
    calls: int = 0
    status: str = ONLY_A
    error: float = 0.0
    cosine: float | None = None
    budget: str = ""


def table_step(comparison: Comparison) -> int | None:
    """The step the console table shows: the first divergence's (later steps only inherit it)."""
    return comparison.first.record.step if comparison.first else None


def summarize(comparison: Comparison, step: int | None = None) -> list[_Summary]:
    """One line per module (or loss, gradient norm), in the order they first ran; of one step."""
    rows: dict[str, _Summary] = {}
    for verdict in comparison.verdicts:
        if step is not None and verdict.record.step != step:
            continue
        name = display_name(verdict)
        row = rows.setdefault(name, _Summary(name))
        row.calls += 1
        if _SEVERITY[verdict.status] > _SEVERITY[row.status]:
            row.status = verdict.status
        worst = verdict.outputs.worst if verdict.outputs else None
        if worst is not None:
            row.error = max(row.error, worst.error)
            if worst.cosine is not None:
                row.cosine = worst.cosine if row.cosine is None else min(row.cosine, worst.cosine)
        if verdict.outputs and verdict.outputs.budget:
            row.budget = verdict.outputs.budget.name
    return list(rows.values())


def print_table(comparison: Comparison) -> None:
    step = table_step(comparison)
    rows = summarize(comparison, step)
    if step is not None:
        print(f"step {step}, where the first divergence is (every step is in compare.csv):")
    width = min(max((len(row.name) for row in rows), default=6), 48)
    print(f"{'module':{width}}  {'calls':>5}  {'status':10}  {'error':>9}  {'cosine':>9}  budget")
    shown = [row for row in rows if row.status in FAILING][:TABLE_ROWS]
    shown = rows[:TABLE_ROWS] if len(rows) <= TABLE_ROWS else shown
    for row in shown:
        cosine = "" if row.cosine is None else f"{row.cosine:.6f}"
        print(
            f"{row.name[:width]:{width}}  {row.calls:5d}  {row.status:10}  {row.error:9.3g}  "
            f"{cosine:>9}  {row.budget}"
        )
    if len(shown) < len(rows):
        print(f"... {len(rows) - len(shown)} more modules in compare.csv")
    counts = ", ".join(
        f"{comparison.count(status)} {status}"
        for status in (OK, DIVERGED, INHERITED, ONLY_A, ONLY_B)
        if comparison.count(status)
    )
    print(f"{len(comparison.verdicts)} records (tolerance {comparison.tolerance}): {counts}")


def _rows(comparison: Comparison) -> Iterator[Row]:
    for verdict in comparison.verdicts:
        record = verdict.record
        outputs, inputs = verdict.outputs, verdict.inputs
        worst = outputs.worst if outputs else None
        first_a = verdict.a.outputs[0] if verdict.a and verdict.a.outputs else None
        first_b = verdict.b.outputs[0] if verdict.b and verdict.b.outputs else None
        shape = first_a.shape if first_a else first_b.shape if first_b else ()
        yield (
            record.rank, record.step, record.kind, record.path, record.call, record.slot,
            verdict.status, "" if inputs is None or not record.inputs else inputs.agree,
            _number(worst.error) if worst else "",
            _number(worst.cosine) if worst else "",
            _number(worst.max_abs) if worst else "",
            _number(worst.relative) if worst else "",
            _number(worst.stat_error) if worst else "",
            outputs.budget.name if outputs and outputs.budget else "",
            first_a.dtype if first_a else "", first_b.dtype if first_b else "",
            "x".join(str(n) for n in shape), outputs.note if outputs else "",
        )  # fmt: skip


def write_reports(comparison: Comparison, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    rows = list(_rows(comparison))
    written = [
        write_csv(out / "compare.csv", HEADER, rows),
        write_xlsx(out / "compare.xlsx", HEADER, rows, sheet="compare"),
    ]
    path = out / "compare.html"
    with output_file(path, out) as stream:
        stream.write(render_html(comparison).encode("utf-8"))
    written.append(path)
    return written


# -- compare.html: the error of each module call along the forward order, as inline SVG ----------

_WIDTH, _HEIGHT, _MARGIN = 960, 320, 48
_FLOOR = 1e-9  # errors below this are drawn on the bottom line (bit-for-bit equal is 0)


def _y(error: float, low: float, high: float) -> float:
    value = math.log10(min(max(error, _FLOOR), 10**high))
    return _MARGIN + (high - value) / (high - low) * (_HEIGHT - 2 * _MARGIN)


def render_svg(comparison: Comparison) -> str:
    points = [
        v for v in comparison.verdicts
        if v.record.kind in (FORWARD, API) and v.outputs is not None and v.outputs.worst is not None
    ]  # fmt: skip
    errors = [v.outputs.worst.error for v in points if v.outputs and v.outputs.worst]
    finite = [e for e in errors if math.isfinite(e)]
    low, high = math.log10(_FLOOR), max(1.0, math.ceil(math.log10(max([*finite, 1.0]))))
    step_x = (_WIDTH - 2 * _MARGIN) / max(len(points) - 1, 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{_HEIGHT}" '
        f'viewBox="0 0 {_WIDTH} {_HEIGHT}" font-family="sans-serif" font-size="11">',
        f'<rect width="{_WIDTH}" height="{_HEIGHT}" fill="white"/>',
    ]
    for exponent in range(int(low), int(high) + 1, 3):
        y = _y(10.0**exponent, low, high)
        parts.append(
            f'<line x1="{_MARGIN}" x2="{_WIDTH - _MARGIN}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
            f'<text x="4" y="{y + 4:.1f}">1e{exponent}</text>'
        )
    previous_step = None
    for index, verdict in enumerate(points):
        x = _MARGIN + index * step_x
        record = verdict.record
        if record.step != previous_step:
            parts.append(
                f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{_MARGIN / 2}" y2="{_HEIGHT - _MARGIN}" '
                f'stroke="#999" stroke-dasharray="4 3"/><text x="{x + 3:.1f}" y="{_MARGIN / 2 + 10}">'
                f"step {record.step}</text>"
            )
            previous_step = record.step
        assert verdict.outputs is not None
        assert verdict.outputs.worst is not None
        error = verdict.outputs.worst.error
        if verdict.outputs.budget is not None:
            y_budget = _y(verdict.outputs.budget.relative, low, high)
            parts.append(
                f'<line x1="{x - 3:.1f}" x2="{x + 3:.1f}" y1="{y_budget:.1f}" y2="{y_budget:.1f}" '
                'stroke="#555"/>'
            )
        title = html.escape(
            f"{record.path} (step {record.step}, call {record.call}, rank {record.rank}): "
            f"{verdict.status}, {metrics_text(verdict.outputs)}"
        )
        parts.append(
            f'<circle cx="{x:.1f}" cy="{_y(error, low, high):.1f}" r="3" '
            f'fill="{_COLOURS.get(verdict.status, "#777")}"><title>{title}</title></circle>'
        )
        if verdict is comparison.first:  # named on the chart: where to look
            parts.append(
                f'<text x="{x + 6:.1f}" y="{_y(error, low, high) + 16:.1f}" fill="#c62828">'
                f"{html.escape(record.path)}</text>"
            )
    parts.append(
        f'<text x="{_MARGIN}" y="{_HEIGHT - 12}">module calls in the order they ended (a module '
        "before its caller); y: error, log scale; dash: budget</text></svg>"
    )
    return "".join(parts)


def render_html(comparison: Comparison) -> str:
    line = first_divergence_line(comparison) or "no divergence: every record within tolerance"
    rows = "".join(
        f"<tr><td>{html.escape(row.name)}</td><td>{row.calls}</td>"
        f'<td style="color:{_COLOURS.get(row.status, "#777")}">{row.status}</td>'
        f"<td>{row.error:.3g}</td><td>{'' if row.cosine is None else f'{row.cosine:.6f}'}</td>"
        f"<td>{row.budget}</td></tr>"
        for row in summarize(comparison, table_step(comparison))
    )
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>ascendify compare</title>'
        "<style>body{font-family:sans-serif;margin:24px}td,th{padding:2px 10px;text-align:left}"
        "</style></head><body><h1>ascendify compare</h1>"
        + "".join(
            f"<p>{side}: <code>{html.escape(run)}</code></p>"
            for side, run in zip("AB", comparison.runs, strict=False)
        )
        + f"<p>tolerance {html.escape(comparison.tolerance)}: {html.escape(line)}</p>"
        f"{render_svg(comparison)}<p>diverged: the divergence starts here (inputs agree, output "
        "does not); inherited: carries a divergence that started earlier.</p>"
        "<table><tr><th>module</th><th>calls</th><th>status</th><th>worst error</th>"
        f"<th>lowest cosine</th><th>budget</th></tr>{rows}</table></body></html>\n"
    )


# -- loss.html: two loss curves and their relative error -----------------------------------------

_CURVE_COLOURS = ("#1565c0", "#ef6c00")  # A, B


def _loss_scale(values: list[float]) -> tuple[float, float]:
    finite = [v for v in values if math.isfinite(v)] or [0.0]
    low, high = min(finite), max(finite)
    return (low - 0.5, high + 0.5) if low == high else (low, high)


def render_loss_svg(verdict: LossVerdict) -> str:
    """Both curves over the compared steps; a NaN or inf loss is a red cross on the top edge.
    Every point is labelled on hover (step, both values, relative error)."""
    errors = verdict.errors
    low, high = _loss_scale([v for e in errors for v in (e.a, e.b)])
    span_x = (_WIDTH - 2 * _MARGIN) / max(len(errors) - 1, 1)

    def y(value: float) -> float:
        return _MARGIN + (high - value) / (high - low) * (_HEIGHT - 2 * _MARGIN)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_WIDTH}" height="{_HEIGHT}" '
        f'viewBox="0 0 {_WIDTH} {_HEIGHT}" font-family="sans-serif" font-size="11">',
        f'<rect width="{_WIDTH}" height="{_HEIGHT}" fill="white"/>',
        f'<text x="4" y="{y(high) + 4:.1f}">{high:.4g}</text>'
        f'<text x="4" y="{y(low) + 4:.1f}">{low:.4g}</text>',
    ]
    for side, colour in enumerate(_CURVE_COLOURS):
        path: list[str] = []
        for index, error in enumerate(errors):
            x, value = _MARGIN + index * span_x, (error.a, error.b)[side]
            title = html.escape(
                f"step {error.step}: A {error.a:.6g}, B {error.b:.6g}, "
                f"relative error {error.relative:.4%}"
            )
            if not math.isfinite(value):
                parts.append(
                    f'<text x="{x - 4:.1f}" y="{_MARGIN - 6}" fill="#c62828">×<title>{title}'
                    "</title></text>"
                )
                continue
            path.append(f"{'L' if path else 'M'}{x:.1f},{y(value):.1f}")
            parts.append(
                f'<circle cx="{x:.1f}" cy="{y(value):.1f}" r="2.5" fill="{colour}">'
                f"<title>{title}</title></circle>"
            )
        if path:
            parts.append(f'<path d="{" ".join(path)}" fill="none" stroke="{colour}"/>')
    past = verdict.first_past
    if past is not None:
        x = _MARGIN + errors.index(past) * span_x
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{_MARGIN / 2}" y2="{_HEIGHT - _MARGIN}" '
            f'stroke="#c62828" stroke-dasharray="4 3"/><text x="{x + 3:.1f}" y="{_MARGIN / 2 + 10}" '
            f'fill="#c62828">first past the limit: step {past.step}</text>'
        )
    legend = (
        f'<tspan fill="{_CURVE_COLOURS[0]}">A: {html.escape(verdict.a.source)}</tspan>'
        f'  <tspan fill="{_CURVE_COLOURS[1]}">B: {html.escape(verdict.b.source)}</tspan>'
    )
    parts.append(f'<text x="{_MARGIN}" y="{_HEIGHT - 12}">{legend}</text></svg>')
    return "".join(parts)


def write_loss_report(verdict: LossVerdict, out: Path) -> list[Path]:
    """loss.csv (step, A, B, relative error) and loss.html (the verdict and the chart)."""
    out.mkdir(parents=True, exist_ok=True)
    rows: list[Row] = [(e.step, repr(e.a), repr(e.b), repr(e.relative)) for e in verdict.errors]
    written = [write_csv(out / "loss.csv", ("step", "loss A", "loss B", "relative error"), rows)]
    summary = "".join(f"<p>{html.escape(line)}</p>" for line in verdict_lines(verdict))
    page = (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>ascendify compare loss</title>'
        "<style>body{font-family:sans-serif;margin:24px}</style></head><body>"
        f"<h1>ascendify compare loss</h1>{summary}{render_loss_svg(verdict)}</body></html>\n"
    )
    path = out / "loss.html"
    with output_file(path, out) as stream:
        stream.write(page.encode("utf-8"))
    return [*written, path]
