"""Report files and the console table, shared by static analysis, the trace and ``migrate``.

CSV columns follow the names users of the CANN tools expect (``File, Start Line, End Line, OP, Tips``), with our rule
code as an extra last column. Cells are made spreadsheet-safe by :mod:`ascendify.tabular`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ascendify import __version__
from ascendify._fs import make_output_dir, shown, write_bytes
from ascendify.analyze.findings import RULES, Finding
from ascendify.tabular import Row, write_csv, write_xlsx

FINDING_HEADER = ("File", "Start Line", "End Line", "OP", "Tips", "Code")
CUDA_OP_HEADER = ("File", "Api")
CONSOLE_ROWS = 40


CsvTable = tuple[Sequence[str], list[Row]]


@dataclass(frozen=True)
class CustomOp:
    """An operator a C++/CUDA source exports to Python (``m.def("name", ...)``)."""

    file: str
    name: str


@dataclass
class AnalysisResult:
    mode: str  # "static" or "trace"
    torch_npu_version: str
    findings: list[Finding]
    custom_ops: list[CustomOp] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)  # mode-specific, goes into report.json
    tables: dict[str, CsvTable] = field(
        default_factory=dict
    )  # extra CSV files: name -> (header, rows)

    def counts(self) -> dict[str, int]:
        return dict(sorted(Counter(finding.code for finding in self.findings).items()))


def write_reports(result: AnalysisResult, out_dir: Path, finding_tables: bool = True) -> list[Path]:
    """Write every report file of ``result`` into ``out_dir`` (created if needed); return their paths.

    ``finding_tables=False`` leaves out the tables of findings (``unsupported_op.*``,
    ``unsupported_api.csv``): a migration lists what is left of them in its own ``unsupported_op``.
    A file of the same name is replaced, a link too (never written through).
    """
    make_output_dir(out_dir)
    findings = sorted(result.findings, key=Finding.sort_key)
    rows = [_finding_row(finding) for finding in findings]
    written = [_write_json(out_dir / "report.json", _report_document(result, findings))]
    if finding_tables:
        written.append(write_csv(out_dir / "unsupported_op.csv", FINDING_HEADER, rows))
        written.append(
            write_xlsx(out_dir / "unsupported_op.xlsx", FINDING_HEADER, rows, sheet="unsupported")
        )
        if result.mode == "static":
            written.append(write_csv(out_dir / "unsupported_api.csv", FINDING_HEADER, rows))
    if result.mode == "static":
        ops = list(dict.fromkeys((op.file, op.name) for op in result.custom_ops))
        written.append(write_csv(out_dir / "cuda_op_list.csv", CUDA_OP_HEADER, ops))
    for name, (header, table_rows) in result.tables.items():
        written.append(write_csv(out_dir / name, header, table_rows))
    return written


def _finding_row(finding: Finding) -> Row:
    return (
        finding.file,
        finding.start_line,
        finding.end_line,
        finding.op,
        finding.tips,
        finding.code,
    )


def _report_document(result: AnalysisResult, findings: Sequence[Finding]) -> dict[str, Any]:
    return {
        "tool": "ascendify analyze",
        "ascendify_version": __version__,
        "mode": result.mode,
        "torch_npu_version": result.torch_npu_version,
        "summary": result.counts(),
        "rules": {code: RULES[code].title for code in result.counts()},
        "findings": [
            {
                "code": finding.code,
                "severity": finding.severity.value,
                "file": finding.file,
                "start_line": finding.start_line,
                "end_line": finding.end_line,
                "op": finding.op,
                "tips": finding.tips,
            }
            for finding in findings
        ],
        "custom_ops": [{"file": op.file, "name": op.name} for op in result.custom_ops],
        **result.details,
    }


def _write_json(path: Path, document: dict[str, Any]) -> Path:
    write_bytes(path, (json.dumps(document, indent=2) + "\n").encode(), path.parent)
    return path


def print_summary(result: AnalysisResult, out_dir: Path) -> None:
    """The console table: the first findings by file and line, then counts per rule."""
    from rich.table import Table

    from ascendify._console import console as pipe_safe_console

    console = pipe_safe_console(highlight=False)
    for skipped in result.details.get("skipped", [])[:CONSOLE_ROWS]:
        console.print(shown(f"skipped {skipped['file']}: {skipped['reason']}"), markup=False)
    findings = sorted(result.findings, key=Finding.sort_key)
    if not findings:
        console.print(
            f"no findings (torch_npu {result.torch_npu_version}); "
            f"reports written to {shown(out_dir)}"
        )
        return
    table = Table(title=f"ascendify analyze ({result.mode}, torch_npu {result.torch_npu_version})")
    for column in ("Location", "Code", "OP", "Tips"):
        table.add_column(column, overflow="fold")
    for finding in findings[:CONSOLE_ROWS]:
        table.add_row(
            f"{shown(finding.file)}:{finding.start_line}", finding.code, finding.op, finding.tips
        )
    console.print(table)
    if len(findings) > CONSOLE_ROWS:
        console.print(f"... {len(findings) - CONSOLE_ROWS} more findings in the reports")
    console.print(
        ", ".join(f"{code} {RULES[code].title}: {count}" for code, count in result.counts().items())
    )
    console.print(f"reports written to {shown(out_dir)}")
