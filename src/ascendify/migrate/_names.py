"""Qualified names through import aliases: ``th.cuda.amp`` is ``torch.cuda.amp`` after ``import torch as th``.

Resolution is flow-insensitive (every import in the file counts, wherever it is), which is what a
migration tool wants: a name imported inside a function is usually used only there. Analyze reuses
this module to name what a call refers to.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass
class Binding:
    """What a local name was bound to by an import (or a plain alias assignment)."""

    qualified: str  # what the name meant in the original file, e.g. "torch.cuda.amp.autocast"
    # What it means after the migration rewrote its import statement (None: import left as it is).
    moved_to: str | None = None

    @property
    def current(self) -> str:
        return self.moved_to or self.qualified


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


class NameResolver:
    """Maps local names to the qualified names their imports give them."""

    def __init__(self) -> None:
        self.bindings: dict[str, Binding] = {}

    def bind(self, local: str, qualified: str) -> Binding:
        binding = Binding(qualified)
        self.bindings[local] = binding
        return binding

    def add_import(self, node: ast.Import | ast.ImportFrom) -> None:
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
        parts = dotted_parts(node)
        if parts is None:
            return None
        binding = self.bindings.get(parts[0])
        return None if binding is None else (binding, parts[1:])

    def qualified_name(self, node: ast.expr) -> str | None:
        """The original (pre-migration) qualified name of a chain, or None if it is not imported."""
        resolved = self.resolve(node)
        if resolved is None:
            return None
        binding, rest = resolved
        return ".".join([binding.qualified, *rest])
