"""Golden cases of every rule: ``tests/golden/migrate/rules/<CODE>/<case>.py`` for the rules of the
default run, ``tests/golden/migrate_modes/<CODE>/<case>.py`` for the rules of a mode. A framework configuration
rule's case may be a YAML, JSON or shell file instead (``rules/<CODE>/<case>.yaml``, ``.json``,
``.sh``): the header lines are the same and are not part of the input.

A case file starts with ``# rules: CODE ...`` (every finding expected, repeated per occurrence); a mode
case then names the run's modes, ``# modes: ...`` (``portable``, ``distributed=MAIN:MODEL``,
``rules=FILE`` next to the case, or the name of any on/off mode, found in the registry:
``specify_device``, ``modelarts``, ``replace``; ``_`` may stand for a ``-`` of the name; ``tune=NAMES``
as ``--tune`` takes them), and optionally
``# path: REL`` (the file's path in SRC). Then the input, then optionally a line ``# output`` and the
expected result. Without ``# output`` the input must come out unchanged. A case expecting an opt-in
rule runs with that rule enabled.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path

from ascendify.configs import CONFIG_SUFFIXES
from ascendify.migrate import (
    Options,
    Settings,
    load_rules,
    migrate_tree,
    plan_tree,
    prepare_output,
    switch_modes,
)
from ascendify.migrate._modes import DistributedMode, Modes, Target
from ascendify.migrate.modes.tune import tune_codes
from ascendify.migrate.rulefile import load_rule_file

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
RULE_CASES = GOLDEN / "migrate" / "rules"
MODE_CASES = GOLDEN / "migrate_modes"
PROJECT = GOLDEN / "migrate" / "projects" / "gpu_project"
_HEADER = re.compile(
    r"# rules:(?P<codes>[ A-Z0-9]*)\n(?:# modes:(?P<modes>[^\n]*)\n)?(?:# path: (?P<path>\S+)\n)?"
)


@dataclass(frozen=True)
class Case:
    path: Path
    codes: list[str]
    settings: Settings
    rel: str  # the file's path in SRC
    source: str
    expected: str

    @property
    def id(self) -> str:
        return f"{self.path.parent.name}/{self.path.stem}"

    @property
    def changes(self) -> bool:
        return self.source != self.expected


def parse_modes(text: str, directory: Path) -> Modes:
    options: dict[str, object] = {}
    known = {mode.name for mode in switch_modes()}
    switches: set[str] = set()
    for word in text.split():
        name, _, value = word.partition("=")
        if name == "portable":
            options["target"] = Target.PORTABLE
        elif name == "distributed":
            main, _, model = value.partition(":")
            options["distributed"] = DistributedMode(main, model or "model")
        elif name == "rules":
            options["user_rules"] = load_rule_file(directory / value)
        elif name == "tune":
            options["tune"] = tune_codes(value)
        elif (switch := name.replace("_", "-")) in known:
            switches.add(switch)
        else:
            raise AssertionError(f"unknown mode {word!r}")
    return Modes(switches=frozenset(switches), **options)  # type: ignore[arg-type]


def load_case(path: Path) -> Case:
    text = path.read_text(encoding="utf-8")
    header = _HEADER.match(text)
    assert header is not None, f"{path} must start with '# rules:'"
    codes = sorted(header["codes"].split())
    rules = load_rules().rules
    settings = Settings(
        enabled=frozenset(code for code in codes if rules[code].opt_in),
        modes=parse_modes(header["modes"] or "", path.parent),
    )
    source, marker, expected = text[header.end() :].partition("# output\n")
    rel = header["path"] or ("train.py" if path.suffix == ".py" else f"config{path.suffix}")
    return Case(path, codes, settings, rel, source, expected if marker else source)


def all_cases() -> list[Case]:
    # Configuration cases are rules of the default run (a mode's folder may hold its input files).
    configs = [path for path in sorted(RULE_CASES.glob("*/*")) if path.suffix in CONFIG_SUFFIXES]
    paths = [*sorted(RULE_CASES.glob("*/*.py")), *configs, *sorted(MODE_CASES.glob("*/*.py"))]
    return [load_case(path) for path in paths]


def migrate_project(
    tmp_path: Path, target: Target, files: dict[str, str]
) -> tuple[Path, dict[str, list[tuple[int, str]]]]:
    """Migrate a project of ``files`` (path relative to its root -> text) for ``target``: the
    result's folder, and each file's changes as (line, rule code)."""
    source = tmp_path / "proj"
    for rel, text in files.items():
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        (source / rel).write_text(text)
    settings = dataclasses.replace(Settings(), modes=Modes(target=target))
    options = Options(source=source, output=tmp_path / "out", settings=settings)
    result_dir = prepare_output(options)
    assert result_dir is not None
    result = migrate_tree(options, result_dir, plan_tree(source))
    rules = {
        outcome.path: sorted((change.start_line, change.code) for change in outcome.changes)
        for outcome in result.files
    }
    return result_dir, rules
