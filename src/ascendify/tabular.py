"""CSV and XLSX report files, written the same way by every command.

A cell a spreadsheet program would run as a formula (CSV injection: ``=``, ``+``, ``-``, ``@``,
``%``, their full-width forms, tab, carriage return) gets a leading apostrophe, which spreadsheets
show as text. Numbers stay numbers.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Sequence
from pathlib import Path

Cell = str | int
Row = Sequence[Cell]

_FORMULA_STARTS = ("=", "+", "-", "@", "%", "\t", "\r", "＝", "＋", "－", "＠", "％")


def spreadsheet_safe(value: Cell) -> Cell:
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def write_csv(path: Path, header: Sequence[str], rows: Iterable[Row]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(header)
        writer.writerows([spreadsheet_safe(value) for value in row] for row in rows)
    return path


def write_xlsx(path: Path, header: Sequence[str], rows: Iterable[Row], sheet: str) -> Path:
    """One sheet, bold header row kept in view while scrolling."""
    from openpyxl import Workbook
    from openpyxl.styles import Font

    workbook = Workbook()
    table = workbook.active
    assert table is not None  # a new workbook always has its first sheet
    table.title = sheet
    table.append(list(header))
    for cell in table[1]:
        cell.font = Font(bold=True)
    for row in rows:
        table.append([spreadsheet_safe(value) for value in row])
    table.freeze_panes = "A2"
    workbook.save(path)
    return path
