"""The code a file runs only where CUDA is available: the blocks behind ``torch.cuda.is_available()``
(in place or held by a name), ``device.type == "cuda"``, an early exit on the negated check, and the
bodies of loops over ``range(torch.cuda.device_count())``; what they call of the file's own
functions and methods counts as part of them. Target-neutral: the portable target keeps the checks
whose blocks reach a CUDA-only call, and NPU305 (a file with NPU code of its own keeps its CUDA
logic) reads what an early exit guards from here too."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TypeGuard

from ascendify.migrate._rule import Context
from ascendify.migrate.rules._flow import called_name
from ascendify.source import NodeIndex
from ascendify.targets.devices import CUDA_DEVICE_TYPE

_AVAILABILITY = "torch.cuda.is_available"
_DEVICE_COUNT = "torch.cuda.device_count"
# The nodes a guarded region hangs off: those holding blocks of statements (a block's early exit
# guards the rest of it), a conditional and an ``and``.
REGION_HOLDERS = tuple(
    kind
    for kind in vars(ast).values()
    if isinstance(kind, type)
    and issubclass(kind, ast.AST)
    and ({"body", "orelse", "finalbody"} & set(kind._fields) or kind is ast.BoolOp)
)


# A name or ``self.x`` -> the ``torch.cuda.is_available`` calls of every value the file gives it
# (``use_cuda = not args.no_cuda and torch.cuda.is_available()``): testing it is testing them.
Held = dict[str, list[ast.expr]]
# The nodes that bind a name (see held_checks and _other_bindings).
_BINDERS = (
    ast.Assign, ast.AnnAssign, ast.arg, ast.For, ast.AsyncFor, ast.comprehension, ast.AugAssign,
    ast.NamedExpr, ast.withitem,
)  # fmt: skip


def held_checks(ctx: Context) -> tuple[Held, set[str]]:
    """The names (``use_cuda``, ``self.use_cuda``) that hold a CUDA check wherever the file binds
    them (a name also bound otherwise, a parameter, a loop, an assignment without the check, is
    not), and those of them always given the bare call (``torch.cuda.is_available()``)."""
    held: Held = {}
    other: set[str] = set()
    mixed: set[str] = set()  # given more than the bare call somewhere
    index = ctx.nodes
    for number in index.walk_order(index.of(*_BINDERS)):
        node = index.nodes[number]
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            checks_ = _availability_checks(ctx, node.value, {})
            for target in targets:
                key = holder(target)
                if key is None:
                    continue
                if checks_:
                    held.setdefault(key, []).extend(checks_)
                    if not _is_bare_check(ctx, node.value):
                        mixed.add(key)
                else:
                    other.add(key)
        elif isinstance(node, ast.arg):
            other.add(node.arg)
        for target in _other_bindings(index, node):  # a loop, ``with ... as``, ``+=``, unpacking
            key = holder(target)
            if key is not None:
                other.add(key)
    held = {key: checks_ for key, checks_ in held.items() if key not in other}
    return held, set(held) - mixed


def _is_bare_check(ctx: Context, value: ast.expr) -> bool:
    return (
        isinstance(value, ast.Call)
        and not value.args
        and not value.keywords
        and ctx.names.qualified_name(value.func) == _AVAILABILITY
    )


def holder(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}" if node.value.id == "self" else None
    return None


def _other_bindings(index: NodeIndex, node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
        return _expressions_in(index, node.target)
    if isinstance(node, ast.AugAssign | ast.NamedExpr):
        return [node.target]
    if isinstance(node, ast.withitem) and node.optional_vars is not None:
        return [node.optional_vars]
    if isinstance(node, ast.Assign):
        return [inner for target in node.targets if isinstance(target, ast.Tuple | ast.List)
                for inner in _expressions_in(index, target)]  # fmt: skip
    return []


def _expressions_in(index: NodeIndex, node: ast.AST) -> list[ast.expr]:
    """``node`` and the expressions inside it, in ``ast.walk``'s order."""
    return [inner for inner in index.subtree(index.number(node)) if isinstance(inner, ast.expr)]


def _availability_checks(ctx: Context, test: ast.expr, held: Held) -> list[ast.expr]:
    """What makes ``test`` (or a term of its ``and``) a CUDA check: ``torch.cuda.is_available``
    called (or a name holding such a call), or the ``"cuda"`` a device is compared with
    (``device.type == "cuda"``, ``"cuda" in device``), which the portable target widens to the
    host's device type."""
    values = (
        test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    )
    found: list[ast.expr] = []
    for value in values:
        if isinstance(value, ast.Call) and ctx.names.qualified_name(value.func) == _AVAILABILITY:
            found.append(value.func)
        elif (key := holder(value)) is not None and key in held:
            found += [value, *held[key]]
        elif isinstance(value, ast.Compare) and all(
            isinstance(op, ast.Eq | ast.In) for op in value.ops
        ):
            found += [
                side
                for side in (value.left, *value.comparators)
                if isinstance(side, ast.Constant) and side.value == CUDA_DEVICE_TYPE
            ]
    return found


_LEAVES = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_BLOCKS = ("body", "orelse", "finalbody")


def exits_early(stmt: ast.AST) -> TypeGuard[ast.If]:
    """Whether ``stmt`` is an ``if`` without ``else`` whose body ends by leaving its block
    (``if device.type != "cuda": return``): what follows it in its block runs only when its test
    is false."""
    return isinstance(stmt, ast.If) and not stmt.orelse and isinstance(stmt.body[-1], _LEAVES)


def statements_after(stmt: ast.stmt, holder: ast.AST | None) -> list[ast.stmt]:
    """The statements after ``stmt`` in the block of ``holder`` that holds it (none where no
    block of ``holder`` does)."""
    for name in _BLOCKS:
        block = getattr(holder, name, None)
        if isinstance(block, list):
            for index, other in enumerate(block):
                if other is stmt:
                    return list(block[index + 1 :])
    return []


def _negated_checks(ctx: Context, test: ast.expr, held: Held) -> list[ast.expr]:
    """What makes ``test`` a negated CUDA check: ``not torch.cuda.is_available()`` (or ``not``
    a name holding it), or a device compared unequal to ``"cuda"`` (``device.type != "cuda"``)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        called = test.operand
        if isinstance(called, ast.Call) and ctx.names.qualified_name(called.func) == _AVAILABILITY:
            return [called.func]
        if (key := holder(called)) is not None and key in held:
            return [called, *held[key]]
    if isinstance(test, ast.Compare) and all(
        isinstance(op, ast.NotEq | ast.NotIn) for op in test.ops
    ):
        return [
            side
            for side in (test.left, *test.comparators)
            if isinstance(side, ast.Constant) and side.value == CUDA_DEVICE_TYPE
        ]
    return []


def _guarded_after(
    ctx: Context, node: ast.AST, held: Held
) -> Iterator[tuple[list[ast.expr], list[ast.AST]]]:
    """``if device.type != "cuda": return`` guards the statements after it in its block."""
    for name in _BLOCKS:
        block = getattr(node, name, None)
        if not isinstance(block, list):
            continue
        for index, stmt in enumerate(block):
            if exits_early(stmt) and (found := _negated_checks(ctx, stmt.test, held)):
                yield found, list(block[index + 1 :])


def guarded_regions(
    ctx: Context, node: ast.AST, held: Held
) -> Iterator[tuple[list[ast.expr], list[ast.AST]]]:
    """(the availability checks, what they guard) of an ``if``, a conditional expression or an
    ``and`` (the operands after the check), and of an early exit on a negated check."""
    yield from _guarded_after(ctx, node, held)
    if isinstance(node, ast.If | ast.IfExp):
        found = _availability_checks(ctx, node.test, held)
        if found:
            yield found, list(node.body) if isinstance(node, ast.If) else [node.body]
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        for index, value in enumerate(node.values):
            found = _availability_checks(ctx, value, held)
            if found:
                yield found, list(node.values[index + 1 :])
                return


def own_functions(ctx: Context) -> dict[str, list[ast.AST]]:
    """The functions and methods this file defines, by name (a call ``f()`` or ``self.f()`` may
    run any of them)."""
    functions: dict[str, list[ast.AST]] = {}
    for node in ctx.names.functions:
        functions.setdefault(node.name, []).append(node)
    return functions


# A loop's device-count bound, by the name that holds it: one mapping per function (or lambda, or
# the module), from its own assignments.
_Bound = dict[str, list[ast.expr]]
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def device_loops(ctx: Context) -> Iterator[tuple[list[ast.expr], list[ast.AST]]]:
    """(the ``device_count`` calls, the body) of each loop over ``range(...device_count()...)``,
    the bound written in place or held by a name the enclosing function (or module) assigns it to;
    in the order a walk with a stack meets the loops, function by function."""
    if _DEVICE_COUNT.rpartition(".")[2] not in ctx.source.text:
        return  # however it is imported, a call of it spells its name
    index = ctx.nodes
    counts = [
        number
        for number in index.of(ast.Call)
        if ctx.names.qualified_name(index.nodes[number].func) == _DEVICE_COUNT  # type: ignore[attr-defined]
    ]
    if not counts:
        return
    bound: dict[int, _Bound] = {}  # a scope's number -> the names it binds to a device count
    for number in index.of(ast.Assign, ast.AnnAssign):
        node = index.nodes[number]
        assert isinstance(node, ast.Assign | ast.AnnAssign)
        names = bound.setdefault(index.scopes[number], {})
        if node.value is None:
            continue
        calls = _count_calls(index, counts, node.value)
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if calls and isinstance(target, ast.Name):
                names.setdefault(target.id, []).extend(calls)
    for number in index.stack_order(index.of(ast.For, ast.AsyncFor, *_COMPREHENSIONS)):
        bindings = []  # innermost scope first
        scope = index.scopes[number]
        while True:
            bindings.append(bound.get(scope, {}))
            if scope == 0:
                break
            scope = index.scopes[scope]
        node = index.nodes[number]
        if isinstance(node, ast.For | ast.AsyncFor):
            bounds = _range_bounds(ctx, counts, node.iter, bindings)
            if bounds:
                yield bounds, list(node.body)
        elif isinstance(node, _COMPREHENSIONS):
            results = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            for at, generator in enumerate(node.generators):
                bounds = _range_bounds(ctx, counts, generator.iter, bindings)
                if bounds:
                    later = [part for inner in node.generators[at + 1 :]
                             for part in (inner.iter, *inner.ifs)]  # fmt: skip
                    yield bounds, [*generator.ifs, *later, *results]


def _count_calls(index: NodeIndex, counts: list[int], expr: ast.expr) -> list[ast.expr]:
    """The called names of the ``device_count`` calls (``counts``: their numbers) inside ``expr``,
    in ``ast.walk``'s order."""
    inside = index.walk_order(index.within(counts, index.number(expr)))
    return [
        call.func for call in map(index.nodes.__getitem__, inside) if isinstance(call, ast.Call)
    ]


def _range_bounds(
    ctx: Context, counts: list[int], iterated: ast.expr, bindings: list[_Bound]
) -> list[ast.expr]:
    """The ``device_count`` calls (``counts``: their numbers) that bound ``range(...)``, directly
    or through a name (``bindings``: innermost scope first)."""
    if not (isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Name)):
        return []
    if iterated.func.id != "range":
        return []
    index = ctx.nodes
    bounds: list[ast.expr] = []
    for argument in iterated.args:
        bounds += _count_calls(index, counts, argument)
        for node in index.subtree(index.number(argument)):
            if isinstance(node, ast.Name):
                scope = next((b for b in bindings if node.id in b), {})
                bounds += scope.get(node.id, [])
    return bounds


def reached_nodes(
    ctx: Context, region: list[ast.AST], helpers: dict[str, list[ast.AST]]
) -> Iterator[ast.AST]:
    """The nodes of ``region`` and of the functions and methods of this file (``helpers``, by
    name) it calls, however deep: ``f()``, ``self.f()`` and a method of the file called on any
    object (``tracker.add()``)."""
    index = ctx.nodes
    pending, seen = list(region), set()
    while pending:
        for node in index.subtree(index.number(pending.pop())):
            if isinstance(node, ast.Call):
                func = node.func
                called = called_name(func) or (
                    func.attr if isinstance(func, ast.Attribute) else None
                )
                for helper in helpers.get(called or "", ()):
                    if id(helper) not in seen:
                        seen.add(id(helper))
                        pending.append(helper)
            yield node
