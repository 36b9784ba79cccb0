"""CSV and XLSX report files, written the same way by every command.

A cell a spreadsheet program would run as a formula (CSV injection: ``=``, ``+``, ``-``, ``@``,
``%``, their full-width forms, tab, carriage return) gets a leading apostrophe, which spreadsheets
show as text. Numbers stay numbers. Files are written under a temporary name and renamed into place
(:mod:`ascendify._fs`), so a link of the same name is replaced, never written through. Text that
cannot be stored as it is (file names with bytes that are not UTF-8, control characters that XLSX
forbids) is written with backslash escapes.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from ascendify._fs import atomic_file
from ascendify._xlsx import write_workbook

Cell = str | int
Row = Sequence[Cell]

_FORMULA_STARTS = ("=", "+", "-", "@", "%", "\t", "\r", "＝", "＋", "－", "＠", "％")
_XLSX_FORBIDDEN = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def spreadsheet_safe(value: Cell) -> Cell:
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def _storable(value: Cell) -> Cell:
    """XLSX text: bytes that were not UTF-8 and forbidden control characters as backslash escapes."""
    if not isinstance(value, str):
        return value
    text = value.encode("utf-8", "backslashreplace").decode("utf-8")
    return _XLSX_FORBIDDEN.sub(lambda match: match.group().encode("unicode_escape").decode(), text)


def write_csv(path: Path, header: Sequence[str], rows: Iterable[Row]) -> Path:
    with atomic_file(path, path.parent) as binary:
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
    with atomic_file(path, path.parent) as stream:
        write_workbook(stream, [str(_storable(name)) for name in header], cells, sheet)
    return path
