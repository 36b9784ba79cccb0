"""compare.csv, compare.xlsx and compare.html, and the first-divergence line (fast, no torch)."""

from __future__ import annotations

import csv
from pathlib import Path

import openpyxl

from ascendify.compare.judge import judge
from ascendify.compare.report import first_divergence_line, write_reports
from tests.compare.synthetic import CLEAN, changed, run

PERTURBED = changed(n=4.4, m=5.5, b1=6.6, out=7.7, loss=0.6)


def test_the_first_divergence_line_names_the_module_step_and_call() -> None:
    line = first_divergence_line(judge(run(CLEAN), run(PERTURBED), "auto"))
    assert line is not None
    assert line.startswith(
        "first divergence: blocks.1.norm (step 0, call 0): stat error 0.09091, max abs error 0.4"
    )
    assert first_divergence_line(judge(run(CLEAN), run(CLEAN), "auto")) is None


def test_reports_hold_every_record_and_draw_without_external_assets(tmp_path: Path) -> None:
    comparison = judge(run(CLEAN), run(PERTURBED), "auto")
    write_reports(comparison, tmp_path)
    with (tmp_path / "compare.csv").open(encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    assert len(rows) == len(comparison.verdicts)
    assert {row["module"]: row["status"] for row in rows}["blocks.1.norm"] == "diverged"
    sheet = openpyxl.load_workbook(tmp_path / "compare.xlsx").active
    assert sheet is not None
    assert sheet.max_row == len(rows) + 1
    page = (tmp_path / "compare.html").read_text(encoding="utf-8")
    assert page.count("<circle") == sum(1 for row in rows if row["kind"] == "fwd")
    assert "first divergence: blocks.1.norm" in page
    assert "src=" not in page
    assert "href=" not in page
