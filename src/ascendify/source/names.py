"""Qualified names through import aliases: ``th.cuda.amp`` is ``torch.cuda.amp`` after ``import torch as th``.

Resolution is flow-insensitive (every import in the file counts, wherever it is), which is what a
migration tool wants: a name imported inside a function is usually used only there. Migration and
analysis both name what a call refers to with one resolver per file, built by :func:`resolve_imports`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Binding:
    """What a local name was bound to by an import (or a plain alias assignment)."""

    qualified: str  # what the name meant in the original file, e.g. "torch.cuda.amp.autocast"


def import_bindings(node: ast.Import | ast.ImportFrom) -> Iterator[tuple[str, str, ast.alias]]:
    """``(local name, qualified name, alias)`` for each name an import statement binds.

    Relative and star imports bind nothing we can name.
    """
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                yield alias.asname, alias.name, alias
            else:
                root = alias.name.partition(".")[0]
                yield root, root, alias
    elif node.level == 0 and node.module:
        for alias in node.names:
            if alias.name != "*":
                yield alias.asname or alias.name, f"{node.module}.{alias.name}", alias


def dotted_parts(node: ast.expr) -> list[str] | None:
    """``["th", "cuda", "amp"]`` for the expression ``th.cuda.amp``; None if it is not a plain chain."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    parts.reverse()
    return parts


@dataclass
class LocalScope:
    """A function whose own scope (not a nested function's or class's) holds an import or a
    ``global``/``nonlocal`` statement: an import there makes the name local to the whole function."""

    function: ast.FunctionDef | ast.AsyncFunctionDef
    depth: int  # nodes above it: with its position, its place in ``ast.walk``'s order
    imports: list[ast.Import | ast.ImportFrom] = field(default_factory=list)
    declared: set[str] = field(default_factory=set)  # names declared global or nonlocal

    def binds(self, name: str) -> bool:
        """Whether an import of the function's own binds ``name`` as a local name."""
        return name not in self.declared and any(
            local == name for node in self.imports for local, _, _ in import_bindings(node)
        )

    def walk_order(self) -> tuple[int, int, int]:
        """Sorts scopes as ``ast.walk`` (breadth first) meets their functions: functions nest only
        in statements, whose child lists come in source order."""
        return self.depth, self.function.lineno, self.function.col_offset


class NameResolver:
    """Maps local names to the qualified names their imports give them."""

    def __init__(self) -> None:
        self.bindings: dict[str, Binding] = {}
        self.imports: list[ast.Import | ast.ImportFrom] = []  # the statements bound, in order
        self.local_scopes: list[LocalScope] = []  # in source order of their first such statement
        # What else the pass over the statements meets, in source order, for the rules that look
        # at every statement of a kind (a function's name called, a device assigned a setting).
        self.assignments: list[ast.Assign | ast.AnnAssign] = []
        self.functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []

    def bind(self, local: str, qualified: str) -> Binding:
        binding = Binding(qualified)
        self.bindings[local] = binding
        return binding

    def add_import(self, node: ast.Import | ast.ImportFrom) -> None:
        self.imports.append(node)
        for local, qualified, _ in import_bindings(node):
            self.bind(local, qualified)

    def add_alias_assignment(self, node: ast.Assign) -> None:
        """``CD = torch.cuda`` makes ``CD.synchronize`` mean ``torch.cuda.synchronize``."""
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            qualified = self.qualified_name(node.value)
            if qualified is not None and node.targets[0].id not in self.bindings:
                self.bind(node.targets[0].id, qualified)

    def resolve(self, node: ast.expr) -> tuple[Binding, list[str]] | None:
        """The binding at the root of a name chain and the attribute names after it."""
        # Most chains a file spells start with a name no import binds (self.x.y): found at the
        # root, before the chain's names are collected.
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        binding = self.bindings.get(root.id) if isinstance(root, ast.Name) else None
        if binding is None:
            return None
        parts = dotted_parts(node)
        assert parts is not None
        return binding, parts[1:]

    def bound_to(self, wanted: Callable[[str], bool]) -> list[str]:
        """Local names whose qualified name is ``wanted``."""
        return [local for local, binding in self.bindings.items() if wanted(binding.qualified)]

    def qualified_name(self, node: ast.expr) -> str | None:
        """The original (pre-migration) qualified name of a chain, or None if it is not imported."""
        resolved = self.resolve(node)
        if resolved is None:
            return None
        binding, rest = resolved
        return ".".join([binding.qualified, *rest])


# The fields of a statement that hold statements (imports and aliases live only there).
STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")


class FieldsByType(dict[type[ast.AST], tuple[str, ...]]):
    """The fields of each node type that ``wanted`` keeps, worked out on first sight of a type. A
    mapping, not a function: walks look it up for every node, and a look-up costs less than a call."""

    def __init__(
        self, wanted: Callable[[type[ast.AST], str], bool], last_first: bool = False
    ) -> None:
        super().__init__()
        self._wanted = wanted
        self._last_first = last_first  # the fields listed last first (for a walk with a stack)

    def __missing__(self, kind: type[ast.AST]) -> tuple[str, ...]:
        fields = tuple(name for name in kind._fields if self._wanted(kind, name))
        self[kind] = fields = fields[::-1] if self._last_first else fields
        return fields


# The statement lists each statement type has (most have none).
_STATEMENT_LISTS_OF = FieldsByType(lambda _, name: name in STATEMENT_LISTS)


def statements(module: ast.Module) -> Iterator[ast.AST]:
    """Every statement of a module, nested ones included, in source order (no expressions)."""
    stack: list[ast.AST] = list(reversed(module.body))
    while stack:
        node = stack.pop()
        yield node
        for name in _STATEMENT_LISTS_OF[type(node)]:
            children = getattr(node, name)
            if children:
                stack.extend(reversed(children))


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_DECLARATIONS = (ast.Global, ast.Nonlocal)


def resolve_imports(module: ast.Module) -> NameResolver:
    """The resolver of a file: every import and plain alias assignment, in source order, and the
    functions whose own scope imports or declares names (:class:`LocalScope`); besides, every
    assignment and function definition. One pass over the statements, as :func:`statements` makes
    it, that knows each statement's function."""
    names = NameResolver()
    scopes: dict[ast.AST, LocalScope] = {}
    # (statement, its depth below the module, the function whose scope it is in with that
    # function's depth, or None)
    stack: list[tuple[ast.AST, int, tuple[ast.AST, int] | None]] = [
        (node, 1, None) for node in reversed(module.body)
    ]
    while stack:
        node, depth, owner = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):  # a tuple: faster than a union type
            names.add_import(node)
            if owner is not None:
                _local_scope(names, scopes, owner).imports.append(node)
        elif isinstance(node, ast.Assign):
            names.add_alias_assignment(node)
            names.assignments.append(node)
        elif isinstance(node, ast.AnnAssign):
            names.assignments.append(node)
        elif owner is not None and isinstance(node, _DECLARATIONS):
            _local_scope(names, scopes, owner).declared.update(node.names)
        fields = _STATEMENT_LISTS_OF[type(node)]
        if fields:
            if isinstance(node, _FUNCTIONS):
                owner = (node, depth)
                names.functions.append(node)
            elif isinstance(node, ast.ClassDef):
                owner = None  # a class body is a scope of its own
            for name in fields:
                children = getattr(node, name)
                if children:
                    stack.extend((child, depth + 1, owner) for child in reversed(children))
    return names


def _local_scope(
    names: NameResolver, scopes: dict[ast.AST, LocalScope], owner: tuple[ast.AST, int]
) -> LocalScope:
    function, depth = owner
    found = scopes.get(function)
    if found is None:
        assert isinstance(function, _FUNCTIONS)
        found = scopes[function] = LocalScope(function, depth)
        names.local_scopes.append(found)
    return found
