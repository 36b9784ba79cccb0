"""The version pairs the catalogue knows to fail (``version_rules`` of ``signatures.json``),
checked against what is installed: Python packages (torch, torch_npu, numpy, transformers,
vllm-ascend...), the CANN toolkit (``cann``) and the Ascend driver (``driver``) and firmware
(``firmware``). Each rule names the thread it was taken from."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ascendify.explain.catalogue import Catalogue, VersionRule, load

_NUMBER = re.compile(r"\d+")


@dataclass(frozen=True)
class VersionProblem:
    rule: VersionRule
    versions: dict[str, str]  # the installed versions that make the rule hold

    def describe(self) -> str:
        found = ", ".join(f"{name} {version}" for name, version in self.versions.items())
        return f"{found}: {self.rule.message}"


@dataclass(frozen=True)
class RuleCheck:
    """One rule checked: whether it holds, and the versions it was checked against."""

    rule: VersionRule
    holds: bool
    versions: dict[str, str | None]  # every name of the rule: its version, None when absent

    def describe(self) -> str:
        found = ", ".join(
            f"{name} {version or 'absent'}" for name, version in self.versions.items()
        )
        return f"{found}: {self.rule.message}"


def checked_rules(
    installed: Mapping[str, str | None], catalogue: Catalogue | None = None
) -> list[RuleCheck]:
    """Every rule, checked against ``installed`` (name -> version, None when absent)."""
    catalogue = catalogue or load()
    checks = []
    for rule in catalogue.version_rules:
        versions = {name: installed.get(name) for name in rule.when}
        holds = all(
            version is not None and matches(version, *rule.when[name])
            for name, version in versions.items()
        )
        checks.append(RuleCheck(rule, holds, versions))
    return checks


def known_failures(
    installed: Mapping[str, str | None], catalogue: Catalogue | None = None
) -> list[VersionProblem]:
    """The rules that hold for ``installed`` (package name -> version, None when absent)."""
    return [
        VersionProblem(check.rule, {k: v for k, v in check.versions.items() if v})
        for check in checked_rules(installed, catalogue)
        if check.holds
    ]


def matches(version: str, op: str, wanted: str) -> bool:
    """``matches("8.2.RC1", "<", "8.3")``: dotted numbers compared number by number (text such as
    ``RC1`` or ``post2`` ends the number), ``prefix`` on the text, or ``exact`` text (a build such
    as ``2.7.1`` apart from its fixed ``2.7.1.post4``)."""
    if op == "prefix":
        return version.startswith(wanted)
    if op == "exact":
        return version == wanted
    left, right = _numbers(version), _numbers(wanted)
    width = max(len(left), len(right))
    left += (0,) * (width - len(left))
    right += (0,) * (width - len(right))
    return {
        "<": left < right, "<=": left <= right, "==": left == right,
        ">=": left >= right, ">": left > right,
    }[op]  # fmt: skip


def _numbers(version: str) -> tuple[int, ...]:
    numbers = []
    for part in version.split("."):
        match = _NUMBER.match(part)
        if match is None:
            break
        numbers.append(int(match.group()))
        if match.end() != len(part):
            break
    return tuple(numbers)
