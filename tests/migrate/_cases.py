"""Golden cases: ``tests/golden/migrate/rules/<CODE>/<case>.py``.

A case file starts with ``# rules: CODE ...`` (every finding expected, repeated per occurrence),
then the input, then optionally a line ``# output`` and the expected result. Without ``# output``
the input must come out unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "migrate"
RULE_CASES = GOLDEN / "rules"
PROJECT = GOLDEN / "projects" / "gpu_project"
_HEADER = re.compile(r"# rules:(?P<codes>[ A-Z0-9]*)\n")


@dataclass(frozen=True)
class Case:
    path: Path
    codes: list[str]
    source: str
    expected: str

    @property
    def id(self) -> str:
        return f"{self.path.parent.name}/{self.path.stem}"

    @property
    def changes(self) -> bool:
        return self.source != self.expected


def load_case(path: Path) -> Case:
    text = path.read_text(encoding="utf-8")
    header = _HEADER.match(text)
    assert header is not None, f"{path} must start with '# rules:'"
    body = text[header.end() :]
    source, marker, expected = body.partition("# output\n")
    return Case(path, sorted(header["codes"].split()), source, expected if marker else source)


def all_cases() -> list[Case]:
    return [load_case(path) for path in sorted(RULE_CASES.glob("*/*.py"))]
