"""Shell scripts: the framework flags of their command lines (``--ddp_backend nccl``, ``--tf32 True``,
``--optim adamw_apex_fused``, ``accelerate launch --dynamo_backend inductor`` ...).

A flag is read where a command may hold it: not in a comment (a ``#`` that starts a word), with its
value after ``=`` or a blank, bare or quoted. A value the shell computes (``$BACKEND``) is not judged.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ascendify.configs.findings import ConfigFinding, line_of, line_span
from ascendify.configs.settings import BOOLEAN, NAMES, judge, normalized

_SPELLINGS = sorted({spelling for name in NAMES for spelling in (name, name.replace("_", "-"))})
TRIGGERS = tuple(f"--{spelling}".encode() for spelling in _SPELLINGS)
_FLAG = re.compile(
    r"(?<![\w-])--(?P<name>" + "|".join(map(re.escape, _SPELLINGS)) + r")(?![\w-])"
    r"(?:(?P<sep>=|[ \t]+)(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s;|&)\"'#]+))?"
)
_COMMENT = re.compile(r"(?:^|(?<=[ \t]))#")
_ONLY_FLAG_LINE = re.compile(r"[ \t]*\\?[ \t]*$")


def scan_shell(text: str, target: str) -> Iterator[ConfigFinding]:
    offset = 0
    for line in text.splitlines(keepends=True):
        code = line
        comment = _COMMENT.search(line)
        if comment is not None:
            code = line[: comment.start()]
        for match in _FLAG.finditer(code):
            yield from _flag(text, offset, match, target)
        offset += len(line)


def _flag(text: str, offset: int, match: re.Match[str], target: str) -> Iterator[ConfigFinding]:
    name = normalized(match["name"])
    raw = match["value"]
    if raw is not None and (raw.startswith("-") or raw == "\\"):
        raw = None  # the next flag, or the line goes on: this one stands alone
    if raw is None:
        if name not in BOOLEAN:
            return
        value, value_start, value_end = "true", None, None
    else:
        value = raw.strip("\"'")
        if "$" in value or "`" in value:
            return
        quote = len(raw) - len(raw.lstrip("\"'"))
        value_start = offset + match.start("value") + quote
        value_end = value_start + len(value)
    verdict = judge(name, value, target)
    if verdict is None:
        return
    start = offset + match.start()
    end = offset + (match.end("value") if raw is not None else match.end("name"))
    op = text[start:end]
    edit = None
    if verdict.drop:
        edit = (*_dropped_span(text, start, end), "")
    elif verdict.new is not None and value_start is not None and value_end is not None:
        edit = (value_start, value_end, verdict.new)
    line = line_of(text, start)
    yield ConfigFinding(verdict.code, line, line, op, verdict.message, edit)


def _dropped_span(text: str, start: int, end: int) -> tuple[int, int]:
    """What removing a flag removes: its whole line when the line holds nothing else (a
    continuation's ``\\`` included), else the flag with the blanks before it."""
    first, last = line_span(text, start, end)
    before, after = text[first:start], text[end:last].rstrip("\r\n")
    if not before.strip() and _ONLY_FLAG_LINE.fullmatch(after) and after.strip():
        return first, last  # "    --tf32 True \": the command goes on on the next line
    blank = start
    while blank > first and text[blank - 1] in " \t":
        blank -= 1
    return (blank, end) if blank < start else (start, end + len(after) - len(after.lstrip(" \t")))
