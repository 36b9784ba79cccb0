"""The smallest XLSX package a spreadsheet program opens: one sheet, a bold header row, a frozen pane.

Written with :mod:`zipfile` and XML text, one row at a time, so a report of any length is never held
in memory as a document tree (a general-purpose library builds one cell object per value, which is
where most of a large report's time went). Text cells are inline strings: a shared-string table
would have to be kept whole until the last row, and on 200,000 report rows it was no faster (its
file 8% smaller). The package is the same bytes for the same rows: every zip entry has the same
fixed time stamp and the entries a fixed order.

Cells are ``str`` or ``int`` (``bool`` is written as a boolean); the caller makes text storable
first (no characters that XML forbids, no lone surrogates).
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterable, Iterator, Sequence
from typing import BinaryIO

_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
_DOC_RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'

_CONTENT_TYPES = (
    f'{_HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/styles.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    "</Types>"
)
_PACKAGE_RELS = (
    f'{_HEAD}<Relationships xmlns="{_RELS}">'
    f'<Relationship Id="rId1" Type="{_DOC_RELS}/officeDocument" Target="xl/workbook.xml"/>'
    "</Relationships>"
)
_WORKBOOK_RELS = (
    f'{_HEAD}<Relationships xmlns="{_RELS}">'
    f'<Relationship Id="rId1" Type="{_DOC_RELS}/worksheet" Target="worksheets/sheet1.xml"/>'
    f'<Relationship Id="rId2" Type="{_DOC_RELS}/styles" Target="styles.xml"/>'
    "</Relationships>"
)
# Style 0 is every cell's, style 1 the header's (font 1: bold). The two fills are ones that
# spreadsheet programs expect at these indices, whether or not a cell uses them.
_STYLES = (
    f'{_HEAD}<styleSheet xmlns="{_MAIN}">'
    '<fonts count="2">'
    '<font><sz val="11"/><name val="Calibri"/><family val="2"/></font>'
    '<font><b/><sz val="11"/><name val="Calibri"/><family val="2"/></font>'
    "</fonts>"
    '<fills count="2"><fill><patternFill patternType="none"/></fill>'
    '<fill><patternFill patternType="gray125"/></fill></fills>'
    '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
    '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
    '<cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
    '<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/></cellXfs>'
    '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>'
    "</styleSheet>"
)
# Row 1 frozen: the pane below it scrolls, the header stays in view.
_SHEET_START = (
    f'{_HEAD}<worksheet xmlns="{_MAIN}"><sheetViews><sheetView workbookViewId="0">'
    '<pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/>'
    '<selection pane="bottomLeft" activeCell="A2" sqref="A2"/>'
    "</sheetView></sheetViews><sheetData>"
)
_SHEET_END = "</sheetData></worksheet>"

_HEADER_STYLE = 1
_ROWS_PER_WRITE = 512  # rows joined into one write: fewer calls into the compressor
# A time the zip format can hold, the same for every entry: two writes give the same bytes.
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)
_ENTRY_MODE = 0o644 << 16  # rw-r--r-- for a tool that unpacks the package


def write_workbook(
    stream: BinaryIO, header: Sequence[str], rows: Iterable[Sequence[str | int]], sheet: str
) -> None:
    """The workbook of one sheet named ``sheet`` into ``stream`` (a new, seekable file)."""
    with zipfile.ZipFile(stream, "w") as package:
        _add(package, "[Content_Types].xml", _CONTENT_TYPES)
        _add(package, "_rels/.rels", _PACKAGE_RELS)
        _add(package, "xl/workbook.xml", _workbook(sheet))
        _add(package, "xl/_rels/workbook.xml.rels", _WORKBOOK_RELS)
        _add(package, "xl/styles.xml", _STYLES)
        with package.open(_entry("xl/worksheets/sheet1.xml"), "w") as part:
            for chunk in _sheet(header, rows):
                part.write(chunk.encode())


def _entry(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=_FIXED_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = _ENTRY_MODE
    return info


def _add(package: zipfile.ZipFile, name: str, text: str) -> None:
    package.writestr(_entry(name), text.encode())


def _workbook(sheet: str) -> str:
    return (
        f'{_HEAD}<workbook xmlns="{_MAIN}" xmlns:r="{_DOC_RELS}">'
        f'<bookViews><workbookView/></bookViews><sheets><sheet name="{_attribute(sheet)}" '
        'sheetId="1" r:id="rId1"/></sheets></workbook>'
    )


def _sheet(header: Sequence[str], rows: Iterable[Sequence[str | int]]) -> Iterator[str]:
    """The sheet's XML in pieces of a few hundred rows each."""
    columns = _Columns()
    yield _SHEET_START + _row(1, header, columns, _HEADER_STYLE)
    batch: list[str] = []
    for number, row in enumerate(rows, start=2):
        batch.append(_row(number, row, columns))
        if len(batch) == _ROWS_PER_WRITE:
            yield "".join(batch)
            batch.clear()
    batch.append(_SHEET_END)
    yield "".join(batch)


def _row(number: int, row: Sequence[str | int], columns: _Columns, style: int = 0) -> str:
    # One loop with the cell kinds inline: a call per cell was a third of the writer's time.
    styled = f' s="{style}"' if style else ""
    parts = [f'<row r="{number}">']
    # As many names as the widest row yet: zip stops at this row's end.
    for name, value in zip(columns.up_to(len(row)), row, strict=False):
        if isinstance(value, str):
            # Without xml:space a reader may drop leading and trailing white space.
            space = ' xml:space="preserve"' if value != value.strip() else ""
            text = _text(value)
            parts.append(
                f'<c r="{name}{number}"{styled} t="inlineStr"><is><t{space}>{text}</t></is></c>'
            )
        elif isinstance(value, bool):  # before int, which it is; a reader should see TRUE/FALSE
            parts.append(f'<c r="{name}{number}"{styled} t="b"><v>{int(value)}</v></c>')
        elif isinstance(value, int):
            parts.append(f'<c r="{name}{number}"{styled}><v>{value}</v></c>')
        else:
            raise TypeError(f"a report cell is text or a whole number, not {type(value).__name__}")
    parts.append("</row>")
    return "".join(parts)


def _text(value: str) -> str:
    """``value`` as XML character data. A carriage return becomes a reference: a reader turns a raw
    one into a line feed, and the cell would no longer read back as written."""
    if "&" in value:
        value = value.replace("&", "&amp;")
    if "<" in value:
        value = value.replace("<", "&lt;")
    if ">" in value:
        value = value.replace(">", "&gt;")
    if '"' in value:
        value = value.replace('"', "&quot;")
    if "\r" in value:
        value = value.replace("\r", "&#13;")
    return value


def _attribute(value: str) -> str:
    """``value`` inside double quotes: white space other than a space as references, since a reader
    turns raw tabs and line breaks in an attribute into spaces."""
    return _text(value).replace("\n", "&#10;").replace("\t", "&#9;")


class _Columns:
    """Column names (A, B, ..., Z, AA, ...) made once per sheet, as many as the widest row."""

    def __init__(self) -> None:
        self._names: list[str] = []

    def up_to(self, count: int) -> list[str]:
        while len(self._names) < count:
            self._names.append(_column_name(len(self._names)))
        return self._names


def _column_name(index: int) -> str:
    """The name of the column at zero-based ``index``: 0 -> A, 25 -> Z, 26 -> AA."""
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(ord("A") + rest) + name
    return name
