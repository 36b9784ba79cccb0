"""One finding model for static and traced analysis, and the table of rule codes."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ascendify.configs import RULES as CONFIG_RULES
from ascendify.configs import ConfigRule, Left
from ascendify.targets import Safety


class Severity(str, Enum):
    """How much a finding blocks running on the NPU."""

    ERROR = "error"  # fails, or silently runs on the CPU
    WARNING = "warning"  # runs, but behaviour or numerics may differ
    INFO = "info"  # must be migrated (ascendify migrate does it)


@dataclass(frozen=True)
class Rule:
    code: str
    severity: Severity
    title: str


RULES: dict[str, Rule] = {
    rule.code: rule
    for rule in (
        Rule("AN100", Severity.INFO, "CUDA API with an NPU counterpart"),
        Rule("AN101", Severity.ERROR, "API without an NPU counterpart"),
        Rule("AN102", Severity.WARNING, "API whose NPU counterpart behaves differently"),
        Rule("AN103", Severity.ERROR, "CUDA-only third-party library"),
        Rule("AN104", Severity.WARNING, "float64 use (most NPU kernels have no double support)"),
        Rule("AN105", Severity.ERROR, "custom C++/CUDA operator"),
        Rule("AN106", Severity.WARNING, "CUDA-only environment variable"),
        Rule("AN201", Severity.ERROR, "executed operator without an NPU kernel"),
        Rule("AN202", Severity.WARNING, "executed operator on float64 tensors"),
    )
}


def _config_severity(rule: ConfigRule) -> Severity:
    """A setting ``migrate`` rewrites safely is a migration to do; one it rewrites unsafely, or that
    works differently, needs a look; one that fails is an error."""
    if rule.left is Left.UNSUPPORTED:
        return Severity.ERROR
    if rule.left is Left.ADVICE or rule.safety is Safety.UNSAFE:
        return Severity.WARNING
    return Severity.INFO


# The framework-configuration rules (ascendify.configs), listed under their own codes.
RULES.update({r.code: Rule(r.code, _config_severity(r), r.summary) for r in CONFIG_RULES})


@dataclass(frozen=True)
class Finding:
    """One reportable use, located in the original source (1-based lines)."""

    file: str  # relative to the analysed root, with forward slashes
    start_line: int
    end_line: int
    op: str  # the qualified API, library, operator or variable
    tips: str
    code: str  # a key of RULES

    @property
    def rule(self) -> Rule:
        return RULES[self.code]

    @property
    def severity(self) -> Severity:
        return self.rule.severity

    @property
    def unsupported(self) -> bool:
        """It fails or falls back to the CPU on the NPU (an error), rather than behaving differently."""
        return self.severity is Severity.ERROR

    def sort_key(self) -> tuple[str, int, str, str, int, str]:
        """Reports list findings in this order: total, so it never depends on the order of a walk."""
        return (self.file, self.start_line, self.code, self.op, self.end_line, self.tips)


def blocking(findings: list[Finding]) -> list[Finding]:
    """Findings that make a command exit 1: anything that is not merely a migration to do."""
    return [finding for finding in findings if finding.severity is not Severity.INFO]
