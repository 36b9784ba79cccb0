from __future__ import annotations

import csv
import os
import time
import zipfile
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


HEADER = ("File", "Line", "Tips")


def _written(tmp_path: Path, rows: list[tuple[str | int, ...]], sheet: str = "unsupported") -> Path:
    return write_xlsx(tmp_path / "report.xlsx", HEADER, rows, sheet=sheet)


def _read(path: Path) -> list[tuple[object, ...]]:
    sheet = openpyxl.load_workbook(path).active
    assert sheet is not None
    return list(sheet.iter_rows(values_only=True))


def test_xlsx_reads_back_as_a_spreadsheet_program_shows_it(tmp_path: Path) -> None:
    path = _written(tmp_path, [("a.py", 3, "fine"), ("b.py", 12345678901, "x")], sheet="a & <b>")
    with zipfile.ZipFile(path) as package:
        assert package.testzip() is None
    book = openpyxl.load_workbook(path)
    sheet = book.active
    assert sheet is not None
    assert book.sheetnames == ["a & <b>"]
    assert sheet.freeze_panes == "A2"
    assert [cell.font.bold for cell in sheet[1]] == [True, True, True]
    assert [cell.font.bold for cell in sheet[2]] == [False, False, False]
    assert list(sheet.iter_rows(values_only=True)) == [
        HEADER,
        ("a.py", 3, "fine"),
        ("b.py", 12345678901, "x"),
    ]
    assert [type(cell.value) for cell in sheet[3]] == [str, int, str]


@pytest.mark.parametrize(
    "text",
    [
        "<a href=\"x\">&amp;</a> 'quoted'",
        "  leading and trailing  ",
        "in\ttabs\tand a line feed\n",
        "line\r\nbreaks\rand\nmore",
        "_x0041_ stays as written",
        "ünïcödé 中文 🚀",
    ],
)
def test_xlsx_text_round_trips(tmp_path: Path, text: str) -> None:
    assert _read(_written(tmp_path, [("f.py", 1, text)])) == [HEADER, ("f.py", 1, text)]


def test_xlsx_text_longer_than_a_cell_holds_is_cut(tmp_path: Path) -> None:
    text = "".join(f"{index:>9}|" for index in range(4000))  # 40,000 characters
    assert _read(_written(tmp_path, [("f.py", 1, text)]))[1] == ("f.py", 1, text[:32_767])


def test_xlsx_text_that_cannot_be_stored_is_escaped(tmp_path: Path) -> None:
    name = os.fsdecode(b"caf\xe9.py")  # a file name that is not UTF-8: a lone surrogate
    rows: list[tuple[str | int, ...]] = [(name, 1, "bell\x07 and nul\x00")]
    assert _read(_written(tmp_path, rows)) == [
        HEADER,
        ("caf\\udce9.py", 1, "bell\\x07 and nul\\x00"),
    ]


def test_xlsx_cells_stay_formula_safe(tmp_path: Path) -> None:
    assert _read(_written(tmp_path, [("=cmd|' /C calc'!A0", -1, "+1")]))[1] == (
        "'=cmd|' /C calc'!A0",
        -1,
        "'+1",
    )


def test_xlsx_rows_of_other_widths_and_no_rows(tmp_path: Path) -> None:
    assert _read(_written(tmp_path, [])) == [HEADER]
    wide = tuple(range(30))  # past column Z: AA, AB, ...
    assert _read(_written(tmp_path, [("short",), wide])) == [
        (*HEADER, *[None] * 27),
        ("short", *[None] * 29),
        wide,
    ]


def test_xlsx_is_the_same_bytes_every_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows: list[tuple[str | int, ...]] = [(f"f{index}.py", index, "tip") for index in range(2000)]
    first = write_xlsx(tmp_path / "one.xlsx", HEADER, rows, sheet="s").read_bytes()
    # The clock a day later (a zip time stamp counts in two-second steps): were it in the bytes,
    # they would differ. Both ways of asking the time are moved.
    later = time.time() + 86_400
    real_localtime = time.localtime
    monkeypatch.setattr(time, "time", lambda: later)
    monkeypatch.setattr(
        time, "localtime", lambda secs=None: real_localtime(later if secs is None else secs)
    )
    again = write_xlsx(tmp_path / "two.xlsx", HEADER, iter(rows), sheet="s").read_bytes()
    assert first == again


def test_xlsx_replaces_a_link_of_its_name_instead_of_writing_through_it(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (tmp_path / "out").mkdir()
    link = tmp_path / "out" / "report.xlsx"
    link.symlink_to(victim)
    write_xlsx(link, HEADER, [("a.py", 1, "x")], sheet="s")
    assert victim.read_text() == "keep me"
    assert not link.is_symlink()
    assert _read(link) == [HEADER, ("a.py", 1, "x")]
    assert [path.name for path in (tmp_path / "out").iterdir()] == ["report.xlsx"]


def test_xlsx_booleans_read_back_as_booleans_and_other_values_are_refused(tmp_path: Path) -> None:
    assert _read(_written(tmp_path, [("a.py", True, False)]))[1] == ("a.py", True, False)
    with pytest.raises(TypeError, match="not float"):
        _written(tmp_path, [("a.py", 1.5, "x")])  # type: ignore[list-item]
    assert [path.name for path in tmp_path.iterdir()] == ["report.xlsx"]  # no half-written file
