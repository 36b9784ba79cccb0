"""The whole result of ``migrate`` (files, change list, analysis reports) stays byte-identical across
refactors of the engine: every run below is compared, file by file, with a recorded fingerprint.

The fingerprints in ``same_outputs.json`` beside this test were taken before the migration and the
analysis were fused into one pass per file. After a deliberate change of output, record them again:
``ASCENDIFY_RECORD_OUTPUTS=1 python -m pytest tests/migrate/test_same_outputs.py``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from pathlib import Path

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
    """sha256 of every file of a result (links: their target), keyed by relative path."""
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
    """A workbook's parts without the one holding its creation time."""
    with zipfile.ZipFile(path) as book:
        names = sorted(name for name in book.namelist() if name != "docProps/core.xml")
        return b"".join(name.encode() + book.read(name) for name in names)


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
