"""The version pairs the catalogue knows to fail (``version_rules`` of ``signatures.json``),
checked against what is installed: torch, torch_npu, numpy and the CANN toolkit."""

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


def known_failures(
    installed: Mapping[str, str | None], catalogue: Catalogue | None = None
) -> list[VersionProblem]:
    """The rules that hold for ``installed`` (package name -> version, None when absent)."""
    catalogue = catalogue or load()
    problems = []
    for rule in catalogue.version_rules:
        versions = {name: installed.get(name) for name in rule.when}
        if all(
            version is not None and matches(version, *rule.when[name])
            for name, version in versions.items()
        ):
            problems.append(VersionProblem(rule, {k: v for k, v in versions.items() if v}))
    return problems


def matches(version: str, op: str, wanted: str) -> bool:
    """``matches("8.2.RC1", "<", "8.3")``: dotted numbers compared number by number (text such as
    ``RC1`` or ``post2`` ends the number), or ``prefix`` on the text."""
    if op == "prefix":
        return version.startswith(wanted)
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
