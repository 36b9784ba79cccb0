"""CSV and XLSX report files, written the same way by every command.

A cell a spreadsheet program would run as a formula (CSV injection: ``=``, ``+``, ``-``, ``@``,
``%``, their full-width forms, tab, carriage return) gets a leading apostrophe, which spreadsheets
show as text. Numbers stay numbers. Files are written by :func:`ascendify._fs.output_file`, so a link
of the same name is replaced, never written through. Text that
cannot be stored as it is (file names with bytes that are not UTF-8, control characters that XLSX
forbids) is written with backslash escapes; in a workbook, text longer than a cell holds (32,767
characters) is cut. Workbooks are written by :mod:`ascendify._xlsx`: the same rows, the same bytes.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from ascendify._fs import output_file
from ascendify._xlsx import write_workbook

Cell = str | int
Row = Sequence[Cell]

_FORMULA_STARTS = ("=", "+", "-", "@", "%", "\t", "\r", "＝", "＋", "－", "＠", "％")
_XLSX_FORBIDDEN = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
# Spreadsheet programs refuse longer text in a cell; the end is cut off, as openpyxl did before.
_XLSX_CELL_CHARACTERS = 32_767


def spreadsheet_safe(value: Cell) -> Cell:
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def _storable(value: Cell) -> Cell:
    """XLSX text: bytes that were not UTF-8 and forbidden control characters as backslash escapes,
    cut to the most characters a cell holds."""
    if not isinstance(value, str):
        return value
    if not (value.isascii() and value.isprintable()):  # else nothing to escape: most text
        text = value.encode("utf-8", "backslashreplace").decode("utf-8")
        value = _XLSX_FORBIDDEN.sub(
            lambda match: match.group().encode("unicode_escape").decode(), text
        )
    return value[:_XLSX_CELL_CHARACTERS]


def write_csv(path: Path, header: Sequence[str], rows: Iterable[Row]) -> Path:
    with output_file(path, path.parent) as binary:
        stream = io.TextIOWrapper(binary, encoding="utf-8", errors="backslashreplace", newline="")
        writer = csv.writer(stream)
        writer.writerow(header)
        writer.writerows([spreadsheet_safe(value) for value in row] for row in rows)
        stream.flush()
        stream.detach()
    return path


def write_xlsx(path: Path, header: Sequence[str], rows: Iterable[Row], sheet: str) -> Path:
    """One sheet, bold header row kept in view while scrolling."""
    cells = ([_storable(spreadsheet_safe(value)) for value in row] for row in rows)
    with output_file(path, path.parent) as stream:
        write_workbook(stream, [str(_storable(name)) for name in header], cells, sheet)
    return path
