"""Every node of one file, from one walk: what rules that ask about the whole file read instead of
walking it themselves.

Most files need no such question (the engine's walk visits only the lines holding a CUDA idiom), so
the index is made on the first question of a file, and once: :class:`NodeIndex` numbers the nodes in
source order (pre-order: a node before what it holds, fields in order) and keeps, for each, the node
that holds it, its depth, where the nodes it holds end, and the function (or lambda) it is in. From
these a rule gets, without looking at any node again, the nodes of a type in the order it needs
(source order, ``ast.walk``'s breadth-first order, or the order of a walk with a stack), the nodes
inside a given one, and whether one node holds another.

The walk reads the field tables of :data:`~ascendify.source.scan.CHILD_FIELDS`: operator and
context singletons and the aliases of an import are not indexed (every rule reads an import whole).
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterable, Iterator

from ascendify.source.scan import CHILD_FIELDS

# Nodes that open a scope of their own for the names bound in them.
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_SCOPE_TYPES = frozenset(SCOPES)


class NodeIndex:
    """The nodes of one module, numbered in source order (pre-order) by one walk."""

    def __init__(self, module: ast.Module) -> None:
        nodes: list[ast.AST] = []
        parents: list[int] = []
        depths: list[int] = []
        scopes: list[int] = []  # the nearest function or lambda holding the node (0: the module)
        by_type: dict[type[ast.AST], list[int]] = {}
        stack: list[tuple[ast.AST, int, int, int]] = [(module, -1, 0, 0)]
        push = stack.append
        while stack:
            node, parent, depth, scope = stack.pop()
            number = len(nodes)
            nodes.append(node)
            parents.append(parent)
            depths.append(depth)
            scopes.append(scope)
            kind = type(node)
            found = by_type.get(kind)
            if found is None:
                by_type[kind] = [number]
            else:
                found.append(number)
            inner = number if kind in _SCOPE_TYPES else scope
            below = depth + 1
            for name in reversed(CHILD_FIELDS[kind]):
                value = getattr(node, name)
                if type(value) is list:
                    for child in reversed(value):
                        if isinstance(child, ast.AST):  # None: the key of a ``**`` entry
                            push((child, number, below, inner))
                elif isinstance(value, ast.AST):
                    push((value, number, below, inner))
        # Where each node's own nodes end: the last number inside it (itself when it holds none).
        last = list(range(len(nodes)))
        for number in range(len(nodes) - 1, 0, -1):
            parent = parents[number]
            last[parent] = max(last[parent], last[number])
        self.nodes = nodes
        self.parents = parents
        self.depths = depths
        self.scopes = scopes
        self.last = last
        self._by_type = by_type
        self._numbers = {id(node): number for number, node in enumerate(nodes)}

    def number(self, node: ast.AST) -> int:
        """The node's number (its place in source order); KeyError for a node not indexed."""
        return self._numbers[id(node)]

    def of(self, *kinds: type[ast.AST]) -> list[int]:
        """The numbers of the nodes of these types, in source order."""
        if len(kinds) == 1:
            return list(self._by_type.get(kinds[0], ()))
        return sorted(number for kind in kinds for number in self._by_type.get(kind, ()))

    def walk_order(self, numbers: Iterable[int]) -> list[int]:
        """``numbers`` in the order ``ast.walk`` meets their nodes: breadth first, each depth in
        source order."""
        depths = self.depths
        return sorted(numbers, key=lambda number: (depths[number], number))

    def stack_order(self, numbers: Iterable[int]) -> list[int]:
        """``numbers`` in the order a walk with a stack meets their nodes (a node's children pushed
        in order, the last popped first): each node before what it holds, later siblings first."""
        last = self.last
        return sorted(numbers, key=lambda number: (-last[number], number))

    def inside(self, number: int, holder: int) -> bool:
        """Whether node ``number`` is ``holder`` or one of the nodes it holds."""
        return holder <= number <= self.last[holder]

    def within(self, numbers: list[int], holder: int) -> list[int]:
        """Those of ``numbers`` (sorted) inside node ``holder``, in source order."""
        start = bisect.bisect_left(numbers, holder)
        end = bisect.bisect_right(numbers, self.last[holder])
        return numbers[start:end]

    def subtree(self, holder: int) -> Iterator[ast.AST]:
        """Node ``holder`` and every node it holds, in ``ast.walk``'s order (indexed nodes only)."""
        for number in self.walk_order(range(holder, self.last[holder] + 1)):
            yield self.nodes[number]
