"""Every rule, of the default run and of every mode, against its golden cases (``tests.migrate._cases``),
plus the invariants every migration must keep."""

from __future__ import annotations

import ast
import json
import re

import pytest
import yaml

from ascendify.errors import AscendifyError
from ascendify.migrate import (
    Changed,
    Failed,
    FileResult,
    Modes,
    Rule,
    Settings,
    Unchanged,
    iter_modes,
    iter_rules,
    load_rules,
    migrate_source,
    opt_in_codes,
)
from ascendify.migrate._configs import migrate_config
from ascendify.migrate._modes import Target
from ascendify.migrate._rule import DEFAULT_RUN
from ascendify.migrate.rules._api import rule_for as api_rule_for
from ascendify.targets import Safety, explicit_targets, load_facts
from tests.migrate._cases import Case, all_cases

CASES = all_cases()
CHANGING = [case for case in CASES if case.changes]
RULES = list(iter_rules(mode=None))
FACTS = load_facts()
_EMITTED_NPU_NAME = re.compile(r"\btorch_npu(?:\.\w+)+")


def migrate_case_file(data: bytes, case: Case) -> FileResult:
    """A Python file through the engine, a configuration file (YAML, JSON, shell) through its own."""
    if case.rel.endswith(".py"):
        return migrate_source(data, case.settings, case.rel)
    return migrate_config(data, case.settings, case.rel)


def migrate(text: str, case: Case) -> tuple[str, list[str]]:
    result = migrate_case_file(text.encode(), case)
    assert not isinstance(result, Failed), result
    output = result.data.decode() if isinstance(result, Changed) else text
    changes = result.changes if isinstance(result, Changed | Unchanged) else ()
    return output, sorted(change.code for change in changes)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_golden_case(case: Case) -> None:
    output, codes = migrate(case.source, case)
    assert output == case.expected
    assert codes == case.codes


@pytest.mark.parametrize("case", CHANGING, ids=lambda case: case.id)
def test_output_parses_and_a_second_run_changes_nothing(case: Case) -> None:
    output, _ = migrate(case.source, case)
    if case.rel.endswith(".py"):
        ast.parse(output)
    elif case.rel.endswith(".json"):
        json.loads(output)
    elif case.rel.endswith((".yaml", ".yml")):
        list(yaml.safe_load_all(output))
    result = migrate_case_file(output.encode(), case)
    assert not isinstance(result, Changed), result


@pytest.mark.parametrize("case", CHANGING, ids=lambda case: case.id)
def test_only_names_that_torch_npu_exports_are_emitted(case: Case) -> None:
    output, _ = migrate(case.source, case)
    for name in set(_EMITTED_NPU_NAME.findall(output)) - set(
        _EMITTED_NPU_NAME.findall(case.source)
    ):
        assert FACTS.has(name), f"{name} is not exported by torch_npu {FACTS.version}"


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.code)
def test_every_rule_has_a_firing_case_and_a_must_not_change_case(rule: type[Rule]) -> None:
    own = [case for case in CASES if case.path.parent.name == rule.code]
    assert any(rule.code in case.codes for case in own), f"no case fires {rule.code}"
    assert any(rule.code not in case.codes for case in own), (
        f"no must-not-change case for {rule.code}"
    )
    if rule.safety is not Safety.REPORT_ONLY:
        assert any(case.changes for case in own), f"no case shows {rule.code}'s edit"


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.code)
def test_every_rule_documents_itself(rule: type[Rule]) -> None:
    doc = rule.__doc__ or ""
    for section in ("What it does:", "Why:", "Example", "Fix safety:"):
        assert section in doc, f"{rule.code} lacks {section!r}"
    # Codes of the default run are NPU... (CFG... for framework configuration); each mode has a
    # prefix of its own.
    assert re.fullmatch(
        r"(NPU|CFG)\d{3}" if rule.mode == DEFAULT_RUN else r"(?!NPU|CFG)[A-Z]{3}\d{3}", rule.code
    )
    assert rule.name
    assert rule.summary


def test_every_mode_has_rules_and_they_are_not_in_the_default_run() -> None:
    default = {rule.code for rule in iter_rules()}
    modes = iter_modes()
    assert modes
    for mode in modes:
        codes = {rule.code for rule in iter_rules(mode)}
        assert codes, mode
        assert not codes & default


def test_the_default_run_ignores_every_mode_rule() -> None:
    source = b"import torch\nmodel = Net().cuda()\ntorch.save(model.state_dict(), 'm.pt')\n"
    result = migrate_source(source, Settings(), "train.py")
    assert isinstance(result, Changed)
    assert {change.code for change in result.changes} == {"NPU001", "NPU201"}


def test_opt_in_rules_run_only_when_enabled() -> None:
    source = b"import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
    assert isinstance(migrate_source(source, Settings()), Unchanged)
    result = migrate_source(source, Settings(enabled=opt_in_codes(["NPU908"])))
    assert isinstance(result, Changed)
    assert b"torch_npu.npu.matmul.allow_hf32 = True" in result.data
    with pytest.raises(AscendifyError, match="not an opt-in rule"):
        opt_in_codes(["NPU201"])


def test_a_second_rule_with_a_used_code_is_refused() -> None:
    existing = next(iter_rules())
    with pytest.raises(TypeError, match=f"rule code {existing.code} is used twice"):
        type("Impostor", (Rule,), {"code": existing.code})
    assert load_rules().rules[existing.code] is existing


def test_rules_can_be_selected() -> None:
    source = b"import torch\nx = torch.ones(1).cuda()\nif x.is_cuda:\n    pass\n"
    result = migrate_source(source, Settings(select=frozenset({"NPU202"})))
    assert isinstance(result, Changed)
    assert result.data == b"import torch\nx = torch.ones(1).cuda()\nif x.is_npu:\n    pass\n"


def test_every_table_entry_is_claimed_by_a_rule() -> None:
    # A mapped API whose safety no family handles would vanish from the report.
    load_rules()
    for target in explicit_targets():
        assert api_rule_for(target.cuda, target.safety) is not None, target


def test_a_device_choice_whose_name_holds_more_than_the_check_is_reported_to_stay_on_the_cpu() -> (
    None
):
    # the golden cases PRT105/device_choice_*: the row must say where the device is chosen
    source = (
        b"import torch\n"
        b"use_cuda = not args.no_cuda and torch.cuda.is_available()\n"
        b'device = torch.device("cuda" if use_cuda else "cpu")\n'
        b"if use_cuda:\n"
        b"    print(torch.cuda.get_device_properties(0))\n"
    )
    result = migrate_source(source, Settings(modes=Modes(target=Target.PORTABLE)))
    assert isinstance(result, Changed)
    (kept,) = [change.message for change in result.changes if change.code == "PRT105"]
    assert "what use_cuda also chooses (line 3) stays on the CPU" in kept
