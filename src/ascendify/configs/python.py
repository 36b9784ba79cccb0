"""Python: the framework settings given as keywords of a call.

``TrainingArguments(...)``, ``Seq2SeqTrainingArguments(...)`` (and a class named after them) for the
Trainer's settings; any call for the model-loading ones (``attn_implementation=``,
``load_in_4bit=``, as ``from_pretrained`` takes them); ``BitsAndBytesConfig(...)``;
``torch.compile(..., backend="inductor")``. Only literal values are judged. Dropping a keyword
removes its line when it has one of its own, else the keyword and its comma.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascendify.configs.findings import ConfigFinding, line_span
from ascendify.configs.settings import Verdict, judge
from ascendify.source import NameResolver, SourceText

_TRAINER_SETTINGS = frozenset({"ddp_backend", "optim", "tf32", "torch_compile_backend"})
_LOADING_SETTINGS = frozenset({"attn_implementation", "load_in_4bit", "load_in_8bit"})
# A call of TrainingArguments, Seq2SeqTrainingArguments or a project's subclass named after them.
_TRAINER_ARGUMENTS = "TrainingArguments"
# Every file a finding can be in holds one of these (anywhere in a name) or the word "inductor".
# Few on purpose: each costs a search of every file of every project.
TRIGGERS = (_TRAINER_ARGUMENTS, "attn_implementation", "load_in_", "BitsAndBytesConfig")
TRIGGER_WORDS = ("inductor",)
_COMMA_OR_COMMENT = frozenset(" \t,")


def call_findings(
    node: ast.Call, names: NameResolver, source: SourceText, target: str
) -> Iterator[ConfigFinding]:
    """The findings of one call."""
    called = _called_name(node.func)
    qualified = names.qualified_name(node.func) or ""
    if called == "BitsAndBytesConfig":
        yield _report(node, source, judge("load_in_4bit", "True", target))
        return
    if qualified == "torch.compile":
        backend = _keyword(node, "backend")
        if backend is not None and _literal(backend.value) == "inductor":
            yield _report(node, source, judge("torch_compile_backend", "inductor", target))
        return
    trainer = called.endswith(_TRAINER_ARGUMENTS)
    settings = _LOADING_SETTINGS | (_TRAINER_SETTINGS if trainer else frozenset())
    for keyword in node.keywords:
        if keyword.arg not in settings:
            continue
        value = _literal(keyword.value)
        if value is None:
            continue
        verdict = judge(keyword.arg, value, target)
        if verdict is None:
            continue
        start, end = _span(source, keyword)
        edit = None
        if verdict.new is not None:
            # Inside the literal, whatever its quotes and prefix; one spelled in pieces is left.
            value_start, value_end = _span(source, keyword.value)
            at = source.text.find(value, value_start, value_end)
            if at < 0:
                continue
            edit = (at, at + len(value), verdict.new)
        elif verdict.drop:
            edit = (*_dropped(source.text, node, keyword, start, end), "")
        line, end_line = keyword.lineno, keyword.end_lineno or keyword.lineno
        op = source.text[start:end]
        yield ConfigFinding(verdict.code, line, end_line, op, verdict.message, edit)


def _called_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _keyword(node: ast.Call, name: str) -> ast.keyword | None:
    return next((k for k in node.keywords if k.arg == name), None)


def _literal(value: ast.expr) -> str | None:
    """A string or boolean constant as text (True -> "True"); None for anything else."""
    if isinstance(value, ast.Constant) and isinstance(value.value, str | bool):
        return str(value.value)
    return None


def _span(source: SourceText, node: ast.AST) -> tuple[int, int]:
    start = source.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
    end = source.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
    return start, end


def _report(node: ast.Call, source: SourceText, verdict: Verdict | None) -> ConfigFinding:
    """The finding of a whole call (a report: the call is left as written)."""
    assert verdict is not None
    start, end = _span(source, node)
    op = source.text[start:end].split("(", 1)[0] + "(...)"
    return ConfigFinding(
        verdict.code, node.lineno, node.end_lineno or node.lineno, op, verdict.message
    )


def _dropped(
    text: str, call: ast.Call, keyword: ast.keyword, start: int, end: int
) -> tuple[int, int]:
    """What removing a keyword argument removes, so that the call stays well formed and no comment
    of another argument goes: its own line(s); else the keyword with the comma after it (or, for the
    last argument, the comma before it)."""
    first, last = line_span(text, start, end)
    rest = text[end:last]
    comment = rest.find("#")
    tail = rest if comment < 0 else rest[:comment]
    if not text[first:start].strip() and set(tail.rstrip("\r\n")) <= _COMMA_OR_COMMENT:
        return first, last
    arguments: list[ast.expr | ast.keyword] = [*call.args, *call.keywords]
    arguments.sort(key=lambda argument: (argument.lineno, argument.col_offset))
    index = arguments.index(keyword)
    after = end
    while after < len(text) and text[after] in " \t":
        after += 1
    if after < len(text) and text[after] == ",":
        after += 1
        while after < len(text) and text[after] in " \t":
            after += 1
        if index + 1 < len(arguments) or text[after : after + 1] == ")":
            return start, after
    if index > 0:
        before = start
        while before > 0 and text[before - 1] in " \t":
            before -= 1
        if text[before - 1 : before] == ",":
            return before - 1, end
    return start, end
