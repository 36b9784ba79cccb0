"""Framework configuration (transformers, accelerate, DeepSpeed): one migration rule per rule of
:mod:`ascendify.configs.rules`, made from that table, and the checker of their Python findings
(keywords of ``TrainingArguments(...)`` and model-loading calls, DeepSpeed configs written as dict
literals). Their findings in YAML, JSON and shell files are made by :mod:`ascendify.migrate._configs`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascendify.configs import (
    RULES,
    TRIGGER_WORDS,
    TRIGGERS,
    ConfigFinding,
    ConfigRule,
    call_findings,
)
from ascendify.configs.deepspeed import TRIGGER_WORDS as DEEPSPEED_WORDS
from ascendify.configs.deepspeed import dict_findings
from ascendify.migrate._modes import Target
from ascendify.migrate._rule import Context, Edit, Finding, Operation, Rule, checks
from ascendify.targets import Safety

_PYTHON_FAMILY = "CFG1"  # the rules whose settings a Python call may hold
_DEEPSPEED_FAMILY = "CFG3"  # the rules of DeepSpeed configs, which a Python dict may hold


def _rule_class(rule: ConfigRule) -> type[Rule]:
    operation = Operation.MODIFY if rule.left is None else Operation(rule.left.value)
    python = rule.code.startswith(_PYTHON_FAMILY)
    deepspeed = rule.code.startswith(_DEEPSPEED_FAMILY)
    words = TRIGGER_WORDS if python else DEEPSPEED_WORDS if deepspeed else ()
    attributes = {
        "__doc__": rule.docstring,
        "__module__": __name__,
        "code": rule.code,
        "name": rule.name,
        "summary": rule.summary,
        "safety": rule.safety,
        "operation": operation,
        "targets": frozenset(Target(target) for target in rule.targets),
        "triggers": tuple(token.encode() for token in TRIGGERS) if python else (),
        "trigger_words": tuple(word.encode() for word in words),
    }
    made: type[Rule] = type(f"Config{rule.code}", (Rule,), attributes)  # subclassing registers it
    assert (made.safety is Safety.REPORT_ONLY) == (rule.left is not None), rule.code
    return made


CONFIG_RULES: dict[str, type[Rule]] = {rule.code: _rule_class(rule) for rule in RULES}
_PYTHON_RULES = tuple(
    rule for code, rule in CONFIG_RULES.items() if code.startswith(_PYTHON_FAMILY)
)
_DEEPSPEED_RULES = tuple(
    rule for code, rule in CONFIG_RULES.items() if code.startswith(_DEEPSPEED_FAMILY)
)


def config_finding(found: ConfigFinding) -> Finding:
    """The migration's finding of a configuration finding."""
    edit = None if found.edit is None else Edit(*found.edit)
    return Finding(CONFIG_RULES[found.code], found.start_line, found.end_line, found.text, edit)


@checks(ast.Call, rules=_PYTHON_RULES)
def _settings_in_call(context: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    target = context.modes.target.value
    for found in call_findings(node, context.names, context.source, target):
        yield config_finding(found)


@checks(ast.Dict, rules=_DEEPSPEED_RULES)
def _deepspeed_dict(context: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Dict)
    if isinstance(parent, ast.Dict):
        return  # a section of a config: read with the config that holds it
    for found in dict_findings(node, context.source, context.modes.target.value):
        yield config_finding(found)
