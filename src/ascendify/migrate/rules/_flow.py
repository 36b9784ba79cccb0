"""Data flow inside one file: which bound values end up in a device (or backend) slot.

``loc = "cuda:{}".format(gpu)`` followed by ``torch.load(path, map_location=loc)`` makes the bound
value a device, whatever the variable is called; ``arch = "cuda"`` that only reaches ``print`` is
text and stays. Names are followed within their function (or the module, for names a function
reads without binding them), through plain assignments, conditional values, parameter defaults and
the arguments of calls to functions the file defines. The analysis is flow-insensitive and runs
once per file, on the first question.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ascendify.migrate._rule import Context
from ascendify.source import SCOPES, NodeIndex

# A call's arguments that sit in a slot: (kind label, argument expression).
SinkFinder = Callable[[Context, ast.Call], Iterator[tuple[str, ast.expr]]]

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = SCOPES
_RECORDED = frozenset({ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.Call})
_SELF = ("self", "cls")


@dataclass
class _Scope:
    """One function body (or the module): what it binds and what its calls pass into slots."""

    node: ast.AST
    parent: _Scope | None
    values: dict[str, list[ast.expr]] = field(default_factory=dict)  # name -> bound values
    defaults: dict[str, ast.expr] = field(default_factory=dict)  # parameter -> default
    parameters: list[str] = field(default_factory=list)
    positional: int = 0  # how many of ``parameters`` can be passed by position
    sinks: list[tuple[str, ast.expr]] = field(default_factory=list)

    def binds(self, name: str) -> bool:
        return name in self.values or name in self.parameters


def reaches_slot(ctx: Context, node: ast.expr, label: str, sinks: SinkFinder) -> bool:
    """Whether the bound value ``node`` (assigned, a default, an argument) reaches a ``label`` slot."""
    reached = ctx.state(_Reached)
    if reached.labels is None:
        reached.labels = _analyse(ctx, sinks)
    return id(node) in reached.labels.get(label, ())


@dataclass
class _Reached:
    """Per file: for each slot label, the ids of the bound values that reach such a slot (the
    analysis runs on the first question)."""

    labels: dict[str, set[int]] | None = None


def may_call_own_function(ctx: Context, call: ast.Call) -> bool:
    """Whether a call may call a function the file defines (``f(...)``, ``self.f(...)``): only then
    can its arguments reach a slot (through the function's parameters), so only then is asking
    about them worth the file's analysis."""
    called = called_name(call.func)
    if called is None:
        return False
    defined = ctx.state(_Defined)
    if defined.names is None:
        defined.names = {node.name for node in ctx.names.functions}
    return called in defined.names


@dataclass
class _Defined:
    """Per file: the names of the functions it defines (found on the first question)."""

    names: set[str] | None = None


# The calls of a file by the name they call (``f(...)``, ``self.f(...)``), with their scope.
_Calls = dict[str, list[tuple[_Scope, ast.Call]]]


def _analyse(ctx: Context, sinks: SinkFinder) -> dict[str, set[int]]:
    scopes, calls = _collect(ctx, sinks)
    functions = {scope.node.name: scope for scope in scopes if isinstance(scope.node, _FUNCTIONS)}
    reached: dict[str, set[int]] = {}
    seen: set[tuple[int, str, str]] = set()
    pending = [(scope, name, label) for scope in scopes for label, expr in scope.sinks
               for name in _names_in(expr)]  # fmt: skip
    while pending:
        scope, name, label = pending.pop()
        owner = _owner(scope, name)
        if owner is None or (id(owner), name, label) in seen:
            continue
        seen.add((id(owner), name, label))
        values = list(owner.values.get(name, ()))
        if name in owner.defaults:
            values.append(owner.defaults[name])
        for value in values:
            reached.setdefault(label, set()).add(id(value))
            pending.extend((owner, inner, label) for inner in _names_in(value))
        if name in owner.parameters and isinstance(owner.node, _FUNCTIONS):
            for caller, argument in _arguments_for(calls, functions, owner, name):
                reached.setdefault(label, set()).add(id(argument))
                pending.extend((caller, inner, label) for inner in _names_in(argument))
    return reached


def _owner(scope: _Scope, name: str) -> _Scope | None:
    current: _Scope | None = scope
    while current is not None:
        if current.binds(name):
            return current
        current = current.parent
    return None


def value_alternatives(
    expr: ast.expr, settled: Callable[[ast.expr], bool] = lambda _: False
) -> Iterator[ast.expr]:
    """The expressions whose value may be ``expr``'s: the branches of conditionals and ``or``/``and``,
    down to the first that is neither (or that ``settled`` says must not be looked into)."""
    if settled(expr):
        yield expr
    elif isinstance(expr, ast.IfExp):
        yield from value_alternatives(expr.body, settled)
        yield from value_alternatives(expr.orelse, settled)
    elif isinstance(expr, ast.BoolOp):
        for value in expr.values:
            yield from value_alternatives(value, settled)
    else:
        yield expr


def _names_in(expr: ast.expr) -> Iterator[str]:
    """Names whose value *is* the expression's value (not names merely used to compute it)."""
    for alternative in value_alternatives(expr):
        if isinstance(alternative, ast.Name):
            yield alternative.id


def _arguments_for(
    calls: _Calls, functions: dict[str, _Scope], function: _Scope, name: str
) -> Iterator[tuple[_Scope, ast.expr]]:
    """Arguments passed for parameter ``name`` by calls of ``function`` anywhere in the file."""
    assert isinstance(function.node, _FUNCTIONS)
    called = function.node.name
    if functions.get(called) is not function:
        return  # a later definition of the name shadows this one
    index = function.parameters.index(name)
    for scope, call in calls.get(called, ()):
        position = index - (1 if isinstance(call.func, ast.Attribute) else 0)
        for keyword in call.keywords:
            if keyword.arg == name:
                yield scope, keyword.value
        starred = any(isinstance(arg, ast.Starred) for arg in call.args[: position + 1])
        if 0 <= position < min(len(call.args), function.positional) and not starred:
            yield scope, call.args[position]


def _collect(ctx: Context, sinks: SinkFinder) -> tuple[list[_Scope], _Calls]:
    """Every scope of the file with what it binds and passes into slots, and the file's calls:
    read from the file's node index. A function's (or lambda's) body is in its scope; what its
    definition holds besides (decorators, defaults, annotations) is not followed."""
    index = ctx.nodes
    module = _Scope(ctx.module, None)
    scopes = [module]
    # A function's number -> its scope and the numbers its body spans; None: it is not followed.
    followed: dict[int, tuple[_Scope, int, int] | None] = {0: (module, 0, len(index.nodes))}
    for number in index.stack_order(index.of(*_SCOPES)):  # the order a walk meets them
        outer = _scope_of(index, number, followed)
        node = index.nodes[number]
        assert isinstance(node, (*_FUNCTIONS, ast.Lambda))
        if outer is None:
            followed[number] = None
            continue
        inner = _Scope(node, outer)
        _add_parameters(inner, node.args)
        scopes.append(inner)
        body = node.body if isinstance(node.body, list) else [node.body]
        first, last = index.number(body[0]), index.last[index.number(body[-1])]
        followed[number] = (inner, first, last)
    calls: _Calls = {}
    for number in index.of(*_RECORDED):
        scope = _scope_of(index, number, followed)
        if scope is not None:
            _record(ctx, sinks, index.nodes[number], scope, calls)
    return scopes, calls


def _scope_of(
    index: NodeIndex, number: int, followed: dict[int, tuple[_Scope, int, int] | None]
) -> _Scope | None:
    """The scope a node is in (that of its function's or lambda's body), None when it is in no
    body followed (a default, a decorator, or anything inside one)."""
    holder = followed[index.scopes[number]]
    if holder is None:
        return None
    scope, first, last = holder
    return scope if first <= number <= last else None


def _record(ctx: Context, sinks: SinkFinder, node: ast.AST, scope: _Scope, calls: _Calls) -> None:
    """Note what an assignment binds in ``scope``, or what a call passes into slots and calls."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Name):
                scope.values.setdefault(target.id, []).append(node.value)
    elif isinstance(node, ast.AnnAssign | ast.NamedExpr) and node.value is not None:
        if isinstance(node.target, ast.Name):
            scope.values.setdefault(node.target.id, []).append(node.value)
    elif isinstance(node, ast.Call):
        called = called_name(node.func)
        if called is not None:
            calls.setdefault(called, []).append((scope, node))
        scope.sinks.extend(sinks(ctx, node))


def called_name(func: ast.expr) -> str | None:
    """The name a call calls, when it may be a function the file defines: ``f`` or ``self.f``."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.attr if func.value.id in _SELF else None
    return None


def _add_parameters(scope: _Scope, arguments: ast.arguments) -> None:
    positional = [*arguments.posonlyargs, *arguments.args]
    scope.parameters = [arg.arg for arg in [*positional, *arguments.kwonlyargs]]
    scope.positional = len(positional)
    with_default = positional[len(positional) - len(arguments.defaults) :]
    for arg, default in zip(with_default, arguments.defaults, strict=True):
        scope.defaults[arg.arg] = default
    for arg, kw_default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True):
        if kw_default is not None:
            scope.defaults[arg.arg] = kw_default
