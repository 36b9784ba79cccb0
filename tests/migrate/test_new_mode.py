"""Adding an on/off mode is one module plus its golden cases: a throw-away mode, written at test time
into the modes package's search path, gets its ``ascendify migrate`` flag, its rules run only when it
is switched on, and its golden cases name it, with no other file edited."""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ascendify.migrate._registry as registry
from ascendify.cli import build_parser, main
from ascendify.migrate import (
    Changed,
    Modes,
    Settings,
    Skipped,
    Unchanged,
    iter_modes,
    load_rules,
    migrate_source,
)
from ascendify.migrate import modes as mode_package
from ascendify.migrate._rule import REGISTERED
from tests.migrate._cases import load_case

MODULE = "shout"
MODE_SOURCE = '''
"""``--shout``: print() -> shout() (a mode the tests write and remove)."""

import ast
from collections.abc import Iterator

from ascendify.migrate import Context, Finding, Mode, Rule, Switch, checks
from ascendify.migrate._modes import EVERY_TARGET
from ascendify.targets import Safety

SHOUT = Mode("shout", rank=99, switch=Switch(("--shout",), "print in capitals"))


class ShoutRule(Rule):
    """Base of the rules of --shout."""

    mode = SHOUT
    targets = EVERY_TARGET


class Shout(ShoutRule):
    """What it does: print() -> shout(). Why: a test. Example: above. Fix safety: safe."""

    code = "SHT001"
    name = "shout"
    summary = "print() -> shout()"
    safety = Safety.SAFE
    triggers = (b"print",)


@checks(ast.Call, rules=(Shout,))
def check_print(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    if isinstance(node.func, ast.Name) and node.func.id == "print":
        yield Shout.finding(node, "print() -> shout()", ctx.replace(node.func, "shout"))
'''
SOURCE = b"print('hi')\n"


# What the mode module adds to: the decorators and Rule.__init_subclass__ hold these very objects.
_DICTS: tuple[dict[Any, Any], ...] = (REGISTERED.rules, REGISTERED.checkers, REGISTERED.serves)
_LISTS: tuple[list[Any], ...] = (REGISTERED.finishers, REGISTERED.binding_triggers)


@pytest.fixture
def shout_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The mode module on the modes package's path; the global registries as they were afterwards."""
    load_rules()  # what is registered now is what the modules imported once register: keep it
    dicts = [{key: copy.copy(value) for key, value in found.items()} for found in _DICTS]
    lists = [list(found) for found in _LISTS]
    (tmp_path / f"{MODULE}.py").write_text(MODE_SOURCE, encoding="utf-8")
    monkeypatch.setattr(mode_package, "__path__", [*mode_package.__path__, str(tmp_path)])
    _forget_loaded()
    try:
        yield
    finally:
        for found, old in zip(_DICTS, dicts, strict=True):
            found.clear()
            found.update(old)
        for found_list, old_list in zip(_LISTS, lists, strict=True):
            found_list[:] = old_list
        sys.modules.pop(f"{mode_package.__name__}.{MODULE}", None)
        _forget_loaded()


def _forget_loaded() -> None:
    registry.load_rules.cache_clear()
    registry.registry_for.cache_clear()


def test_the_mode_gets_its_flag(shout_mode: None, capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    assert parser.parse_args(["migrate", "-i", "src", "--shout"]).switches == ["shout"]
    assert parser.parse_args(["migrate", "-i", "src"]).switches == []
    with pytest.raises(SystemExit):
        main(["migrate", "--help"])
    help_text = capsys.readouterr().out
    assert "--shout" in help_text
    assert "print in capitals" in help_text


def test_its_rules_run_only_when_it_is_switched_on(shout_mode: None, tmp_path: Path) -> None:
    assert isinstance(migrate_source(SOURCE, Settings(), "train.py"), Skipped | Unchanged)
    result = migrate_source(SOURCE, Settings(modes=Modes(switches=frozenset({"shout"}))))
    assert isinstance(result, Changed)
    assert result.data == b"shout('hi')\n"
    assert [change.code for change in result.changes] == ["SHT001"]
    source = tmp_path / "project"
    source.mkdir()
    (source / "train.py").write_bytes(SOURCE)
    for flags, expected in (([], SOURCE), (["--shout"], result.data)):
        out = tmp_path / f"out{len(flags)}"
        assert main(["migrate", "-i", str(source), "-o", str(out), "-j", "1", *flags]) == 0
        assert (out / "project_msft" / "train.py").read_bytes() == expected


def test_its_golden_cases_name_it(shout_mode: None, tmp_path: Path) -> None:
    case = tmp_path / "SHT001" / "print.py"
    case.parent.mkdir()
    case.write_text("# rules: SHT001\n# modes: shout\nprint(1)\n# output\nshout(1)\n")
    loaded = load_case(case)
    result = migrate_source(loaded.source.encode(), loaded.settings, loaded.rel)
    assert isinstance(result, Changed)
    assert result.data.decode() == loaded.expected


def test_the_registries_are_clean_without_it() -> None:
    assert "SHT001" not in load_rules().rules
    assert "shout" not in {mode.name for mode in iter_modes()}
    assert f"{mode_package.__name__}.{MODULE}" not in sys.modules
