"""What a configuration scan yields: findings located in the original text, with text-span edits."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConfigFinding:
    code: str  # of a rule of ascendify.configs.rules.RULES
    start_line: int  # 1-based, of the original text
    end_line: int
    op: str  # the setting as written ("--ddp_backend nccl", 'ddp_backend="nccl"')
    message: str  # what was done, or what to do
    # Replace text[start:end] with the string (offsets in the decoded text); None: report only.
    edit: tuple[int, int, str] | None = None

    @property
    def text(self) -> str:
        """The change-list message: it names the setting, so the analysis' row of the same setting
        is known to be handled."""
        return f"{self.op}: {self.message}"


def line_of(text: str, offset: int) -> int:
    """The 1-based line of a string offset."""
    return text.count("\n", 0, offset) + 1


def line_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The offsets of the whole lines holding ``text[start:end]``, the last line end included."""
    first = text.rfind("\n", 0, start) + 1
    last = text.find("\n", end)
    return first, len(text) if last < 0 else last + 1
