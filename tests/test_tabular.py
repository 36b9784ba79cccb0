from __future__ import annotations

import csv
from pathlib import Path

import openpyxl
import pytest

from ascendify.tabular import spreadsheet_safe, write_csv, write_xlsx


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("=HYPERLINK(1)", "'=HYPERLINK(1)"),
        ("+1", "'+1"),
        ("-x", "'-x"),
        ("@sum", "'@sum"),
        ("＝1", "'＝1"),
        ("torch.cuda.set_device", "torch.cuda.set_device"),
        ("a=b", "a=b"),
        (12, 12),
    ],
)
def test_formula_cells_are_defused(value: str | int, written: str | int) -> None:
    assert spreadsheet_safe(value) == written


def test_csv_and_xlsx_hold_the_same_rows(tmp_path: Path) -> None:
    header = ("File", "Line", "Tips")
    rows = [("a.py", 3, "=cmd"), ("b.py", 10, "fine")]
    with write_csv(tmp_path / "t.csv", header, rows).open(newline="") as stream:
        assert list(csv.reader(stream)) == [
            list(header),
            ["a.py", "3", "'=cmd"],
            ["b.py", "10", "fine"],
        ]
    sheet = openpyxl.load_workbook(write_xlsx(tmp_path / "t.xlsx", header, rows, sheet="s")).active
    assert sheet is not None
    assert sheet.title == "s"
    assert list(sheet.iter_rows(values_only=True)) == [
        header,
        ("a.py", 3, "'=cmd"),
        ("b.py", 10, "fine"),
    ]
