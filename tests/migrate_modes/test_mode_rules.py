"""Every mode rule against its golden cases: ``tests/golden/migrate_modes/<CODE>/<case>.py``.

A case starts with ``# rules: CODE ...`` (every finding expected), then ``# modes: ...`` naming the
run's modes (``portable``, ``specify_device``, ``modelarts``, ``distributed=MAIN:MODEL``,
``rules=FILE`` next to the case, ``replace``) and optionally ``# path: REL`` (the file's path in
SRC), then the input, then optionally ``# output`` and the expected result (without it the input must not change).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from ascendify.migrate import (
    Changed,
    Failed,
    Rule,
    Settings,
    Unchanged,
    iter_modes,
    iter_rules,
    migrate_source,
)
from ascendify.migrate._modes import DistributedMode, Modes, Target
from ascendify.migrate.rulefile import load_rule_file
from ascendify.targets import load_facts

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "migrate_modes"
_HEADER = re.compile(
    r"# rules:(?P<codes>[ A-Z0-9]*)\n# modes:(?P<modes>[^\n]*)\n(?:# path: (?P<path>\S+)\n)?"
)


@dataclass(frozen=True)
class Case:
    path: Path
    codes: list[str]
    modes: Modes
    rel: str
    source: str
    expected: str

    @property
    def id(self) -> str:
        return f"{self.path.parent.name}/{self.path.stem}"


def parse_modes(text: str, directory: Path) -> Modes:
    options: dict[str, object] = {}
    for word in text.split():
        name, _, value = word.partition("=")
        if name == "portable":
            options["target"] = Target.PORTABLE
        elif name == "specify_device":
            options["specify_device"] = True
        elif name == "modelarts":
            options["modelarts"] = True
        elif name == "distributed":
            main, _, model = value.partition(":")
            options["distributed"] = DistributedMode(main, model or "model")
        elif name == "rules":
            options["user_rules"] = load_rule_file(directory / value)
        elif name == "replace":
            options["replace_unsupported"] = True
        else:
            raise AssertionError(f"unknown mode {word!r}")
    return Modes(**options)  # type: ignore[arg-type]


def load_case(path: Path) -> Case:
    text = path.read_text(encoding="utf-8")
    header = _HEADER.match(text)
    assert header is not None, f"{path} must start with '# rules:' and '# modes:'"
    source, marker, expected = text[header.end() :].partition("# output\n")
    return Case(
        path,
        sorted(header["codes"].split()),
        parse_modes(header["modes"], path.parent),
        header["path"] or "train.py",
        source,
        expected if marker else source,
    )


CASES = [load_case(path) for path in sorted(GOLDEN.glob("*/*.py"))]


def migrate(text: str, case: Case) -> tuple[str, list[str]]:
    result = migrate_source(text.encode(), Settings(modes=case.modes), case.rel)
    assert not isinstance(result, Failed), result
    output = result.data.decode() if isinstance(result, Changed) else text
    changes = result.changes if isinstance(result, Changed | Unchanged) else ()
    return output, sorted(change.code for change in changes)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_golden_case(case: Case) -> None:
    output, codes = migrate(case.source, case)
    assert output == case.expected
    assert codes == case.codes


@pytest.mark.parametrize("case", [c for c in CASES if c.source != c.expected], ids=lambda c: c.id)
def test_output_parses_and_a_second_run_changes_nothing(case: Case) -> None:
    output, _ = migrate(case.source, case)
    ast.parse(output)
    again, _ = migrate(output, case)
    assert again == output


MODE_RULES = [rule for mode in iter_modes() for rule in iter_rules(mode)]


def test_every_mode_has_rules_and_they_are_not_in_the_default_run() -> None:
    default = {rule.code for rule in iter_rules()}
    for mode in iter_modes():
        codes = {rule.code for rule in iter_rules(mode)}
        assert codes, mode
        assert not codes & default


@pytest.mark.parametrize("rule", MODE_RULES, ids=lambda rule: rule.code)
def test_every_mode_rule_has_a_firing_and_a_must_not_change_case(rule: type[Rule]) -> None:
    own = [case for case in CASES if case.path.parent.name == rule.code]
    assert any(rule.code in case.codes for case in own), f"no case fires {rule.code}"
    assert any(rule.code not in case.codes for case in own), (
        f"no must-not-change case for {rule.code}"
    )


@pytest.mark.parametrize("rule", MODE_RULES, ids=lambda rule: rule.code)
def test_every_mode_rule_documents_itself(rule: type[Rule]) -> None:
    doc = rule.__doc__ or ""
    for section in ("What it does:", "Why:", "Example", "Fix safety:"):
        assert section in doc, f"{rule.code} lacks {section!r}"
    assert re.fullmatch(r"(PRT|DST|SDV|MDA|USR|RPL)\d{3}", rule.code)


def test_the_default_run_ignores_every_mode_rule() -> None:
    source = b"import torch\nmodel = Net().cuda()\ntorch.save(model.state_dict(), 'm.pt')\n"
    result = migrate_source(source, Settings(), "train.py")
    assert isinstance(result, Changed)
    assert {change.code for change in result.changes} == {"NPU001", "NPU201"}


@pytest.mark.parametrize("case", [c for c in CASES if c.source != c.expected], ids=lambda c: c.id)
def test_only_names_that_torch_npu_exports_are_emitted(case: Case) -> None:
    facts = load_facts()
    emitted = set(re.findall(r"\btorch_npu(?:\.\w+)+", case.expected))
    for name in emitted - set(re.findall(r"\btorch_npu(?:\.\w+)+", case.source)):
        assert facts.has(name), f"{name} is not exported by torch_npu {facts.version}"
