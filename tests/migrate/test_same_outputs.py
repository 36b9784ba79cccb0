"""The whole result of ``migrate`` (files, change list, analysis reports) stays byte-identical across
refactors of the engine: every run below is compared, file by file, with a recorded fingerprint.
A workbook is compared by what a reader sees in it (cells, their types, bold header, frozen pane),
not by its bytes, so the writer of the XLSX format may change while the reports stay the same.

The fingerprints in ``same_outputs.json`` beside this test were taken before the migration and the
analysis were fused into one pass per file. After a deliberate change of output, record them again:
``ASCENDIFY_RECORD_OUTPUTS=1 python -m pytest tests/migrate/test_same_outputs.py``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path

import openpyxl
import pytest
from rich.console import Console

from ascendify.analyze.static import StaticAnalysis
from ascendify.migrate import Options, Settings, run_migration
from ascendify.migrate.extras import build_modes

TESTS = Path(__file__).resolve().parents[1]
RECORD = Path(__file__).with_name("same_outputs.json")
PROJECTS = {
    "golden": TESTS / "golden",
    "differential": TESTS / "differential" / "scripts",
    "mode-projects": TESTS / "migrate_modes" / "projects",
}
RUNS: dict[str, dict[str, object]] = {
    "npu": {},
    "portable": {"target": "portable"},
    "device-modelarts-replace": {"switches": {"specify-device", "modelarts", "replace"}},
    "rules": {"rules_file": TESTS / "golden" / "migrate_modes" / "USR001" / "rules.json"},
}
# The log holds timings and absolute paths: its lines are not compared.
_NOT_COMPARED = frozenset({"msFmkTranspltlog.txt"})


def fingerprint(result_dir: Path) -> dict[str, str]:
    """sha256 of every file of a result (links: their target; workbooks: what a reader sees),
    keyed by relative path."""
    prints: dict[str, str] = {}
    for path in sorted(result_dir.rglob("*")):
        rel = path.relative_to(result_dir).as_posix()
        if path.name in _NOT_COMPARED or (path.is_dir() and not path.is_symlink()):
            continue
        if path.is_symlink():
            data = os.readlink(path).encode()
        elif path.suffix == ".xlsx":
            data = _workbook_content(path)
        else:
            data = path.read_bytes()
        # Messages name the rule files of the runs: where the tests are checked out is not compared.
        data = data.replace(str(TESTS).encode(), b"<tests>")
        prints[rel] = hashlib.sha256(data).hexdigest()
    return prints


def _workbook_content(path: Path) -> bytes:
    """A workbook as a reader sees it: each sheet's title, frozen pane, every cell's value with its
    type, and which cells of the header row are bold. Not its raw parts, so that a workbook written
    by another writer (other XML, other zip layout) with the same content has the same fingerprint.
    """
    book = openpyxl.load_workbook(path)
    sheets = []
    for sheet in book.worksheets:
        cells = [
            [[type(cell.value).__name__, cell.value] for cell in row] for row in sheet.iter_rows()
        ]
        bold = [bool(cell.font.bold) for cell in sheet[1]] if sheet.max_row else []
        sheets.append(
            {"title": sheet.title, "freeze": sheet.freeze_panes, "bold": bold, "cells": cells}
        )
    return json.dumps(sheets, ensure_ascii=False).encode()


def migrate_project(source: Path, out: Path, run: dict[str, object]) -> dict[str, str]:
    modes = build_modes(source, **run)  # type: ignore[arg-type]
    settings = Settings(modes=modes)
    analysis = StaticAnalysis(settings.torch_npu_version)
    options = Options(source=source, output=out, settings=settings, jobs=1, companion=analysis)
    quiet = Console(file=io.StringIO())
    assert run_migration(options, quiet, quiet) == 0
    (result_dir,) = out.iterdir()
    return fingerprint(result_dir)


DISTRIBUTED = {"main": Path("single_card/train.py"), "model": "model"}


def _cases() -> list[tuple[str, str]]:
    every = [(project, run) for project in PROJECTS for run in RUNS]
    return [*every, ("mode-projects", "distributed")]


@pytest.fixture(scope="module")
def recorded() -> dict[str, dict[str, str]]:
    if os.environ.get("ASCENDIFY_RECORD_OUTPUTS"):
        return {}
    return json.loads(RECORD.read_text())  # type: ignore[no-any-return]


@pytest.mark.parametrize(("project", "run"), _cases())
def test_result_is_byte_identical(
    project: str, run: str, tmp_path: Path, recorded: dict[str, dict[str, str]]
) -> None:
    prints = migrate_project(PROJECTS[project], tmp_path, RUNS.get(run, DISTRIBUTED))
    key = f"{project}/{run}"
    if os.environ.get("ASCENDIFY_RECORD_OUTPUTS"):
        stored = json.loads(RECORD.read_text()) if RECORD.exists() else {}
        stored[key] = prints
        RECORD.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n")
        return
    assert len(prints) > 5
    assert prints == recorded[key]
