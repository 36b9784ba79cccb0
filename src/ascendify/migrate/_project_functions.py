"""Which parameters of a project module's own functions reach a device: ``def move(obj, device):
return obj.to(device)`` takes a device second, so ``move(batch, "cuda")`` in another module passes
one, as ``move(batch, device="cuda")`` does.

Read by the project pass (:mod:`ascendify.migrate._project`), only for the top-level functions
that a module holding a CUDA literal imports, and the functions of their module they call: each
is parsed on its own, never the whole module. A parameter reaches a device when it is, or a local name bound to it is, the
target of ``.to()``, a device keyword of any call (``device=``, ``map_location=``, ...), the first
argument of ``torch.device()``, or an argument of another function of the same module that
reaches one there.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from ascendify.targets.devices import DEVICE_KEYWORDS

# A function defined at the top level of a module, found by the line break before it.
_TOP_LEVEL_DEF = re.compile(rb"\n(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(")
# The next line of a module that starts at its first column with code (not a comment, nor the
# ``)`` that closes a definition's parameters written one per line).
_NEXT_TOP_LEVEL = re.compile(rb"\n[^\s#)]")
_CALLED = re.compile(rb"(?<![\w.])(\w+)[ \t]*\(")
# Text one of which a function that hands a parameter to a device slot holds.
_SLOT_TEXT = (b".to(", b"device", b"map_location")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class DeviceFunction:
    """A top-level function of a module and its parameters that reach a device slot."""

    name: str
    positions: tuple[int, ...]  # indexes of those that may be passed by position
    keywords: tuple[str, ...]  # names of those that may be passed by keyword


def device_functions(data: bytes, wanted: frozenset[str]) -> tuple[DeviceFunction, ...]:
    """The top-level functions named ``wanted`` of a module's source whose parameters reach a
    device slot."""
    if not any(text in data for text in _SLOT_TEXT):
        return ()
    functions = {
        function.name: _read_body(function)
        for function in _top_level_functions(b"\n" + data, wanted)
    }
    reaching = {name: _closure(body.slot_names, body.aliases) for name, body in functions.items()}
    # Passed on to another function of the module, at a parameter that reaches a device there.
    changed = True
    while changed:
        changed = False
        for name, body in functions.items():
            passed = set(_passed_on(body, functions, reaching)) - reaching[name]
            if passed:
                reaching[name] |= _closure(passed, body.aliases)
                changed = True
    return tuple(
        found
        for name, body in functions.items()
        if name in wanted and (found := _described(body.function, reaching[name])) is not None
    )


def _top_level_functions(
    text: bytes, wanted: frozenset[str]
) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The ``wanted`` top-level functions and those of the module they call, however deep, each
    parsed on its own. A function that does not parse so (a docstring line at the first column)
    is left out: it is not followed."""
    segments: dict[str, bytes] = {}
    for match in _TOP_LEVEL_DEF.finditer(text):
        end = _NEXT_TOP_LEVEL.search(text, match.end())
        name = match.group(1).decode()
        segments[name] = text[match.start() + 1 : end.start() if end is not None else len(text)]
    defined = frozenset(segments)
    pending = list(wanted & defined)
    parsed: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    while pending:
        name = pending.pop()
        segment = segments.pop(name, None)
        if segment is None:
            continue  # parsed already
        calls = {call.decode() for call in _CALLED.findall(segment)} & defined - {name}
        if not calls and not any(slot in segment for slot in _SLOT_TEXT):
            continue  # it hands nothing to a device slot, nor to a function that may
        function = _parsed(segment)
        if function is not None:
            parsed[name] = function
            pending.extend(calls)
    return list(parsed.values())


def _parsed(segment: bytes) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        tree = ast.parse(segment)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    only = tree.body[0] if len(tree.body) == 1 else None
    return only if isinstance(only, _FUNCTIONS) else None


def _positional(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The names of the parameters that may be passed by position, in order."""
    return [arg.arg for arg in [*function.args.posonlyargs, *function.args.args]]


def _value_names(expr: ast.expr) -> Iterator[str]:
    """Names whose value is the expression's (through conditionals and ``or``/``and``)."""
    if isinstance(expr, ast.Name):
        yield expr.id
    elif isinstance(expr, ast.IfExp):
        yield from _value_names(expr.body)
        yield from _value_names(expr.orelse)
    elif isinstance(expr, ast.BoolOp):
        for value in expr.values:
            yield from _value_names(value)


@dataclass
class _Body:
    """What one walk of a function finds: the names in its device slots, what each name it assigns
    takes its value from (``dev = device``), and its calls by a plain name."""

    function: ast.FunctionDef | ast.AsyncFunctionDef
    positional: list[str]
    slot_names: set[str] = field(default_factory=set)
    aliases: dict[str, set[str]] = field(default_factory=dict)
    calls: list[ast.Call] = field(default_factory=list)


def _read_body(function: ast.FunctionDef | ast.AsyncFunctionDef) -> _Body:
    body = _Body(function, _positional(function))
    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    body.aliases.setdefault(target.id, set()).update(_value_names(node.value))
        elif isinstance(node, ast.Call):
            for value in _slot_values(node):
                body.slot_names.update(_value_names(value))
            if isinstance(node.func, ast.Name):
                body.calls.append(node)
    return body


def _slot_values(node: ast.Call) -> Iterator[ast.expr]:
    """The arguments of a call that sit in a device slot."""
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if called in ("to", "device") and node.args and not isinstance(node.args[0], ast.Starred):
        yield node.args[0]  # x.to(device), torch.device(device)
    for keyword in node.keywords:
        if keyword.arg in DEVICE_KEYWORDS:
            yield keyword.value


def _closure(names: set[str], aliases: dict[str, set[str]]) -> set[str]:
    """``names`` and every name whose value one of them takes, however many assignments away."""
    reached = set(names)
    pending = list(reached)
    while pending:
        for source in aliases.get(pending.pop(), ()):
            if source not in reached:
                reached.add(source)
                pending.append(source)
    return reached


def _passed_on(
    body: _Body, functions: dict[str, _Body], reaching: dict[str, set[str]]
) -> Iterator[str]:
    """Names of a function passed to a function of the module at a parameter reaching a device."""
    for call in body.calls:
        assert isinstance(call.func, ast.Name)
        target = functions.get(call.func.id)
        if target is None:
            continue
        reached = reaching[call.func.id]
        for keyword in call.keywords:
            if keyword.arg in reached:
                yield from _value_names(keyword.value)
        for index, argument in enumerate(call.args[: len(target.positional)]):
            if isinstance(argument, ast.Starred):
                break
            if target.positional[index] in reached:
                yield from _value_names(argument)


def _described(
    function: ast.FunctionDef | ast.AsyncFunctionDef, reached: set[str]
) -> DeviceFunction | None:
    keywords = [arg.arg for arg in [*function.args.args, *function.args.kwonlyargs]]
    positions = tuple(index for index, name in enumerate(_positional(function)) if name in reached)
    named = tuple(name for name in keywords if name in reached)
    if not positions and not named:
        return None
    return DeviceFunction(function.name, positions, named)
