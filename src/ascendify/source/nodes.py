"""Every node of one file, from one walk: what rules that ask about the whole file read instead of
walking it themselves.

Most files need no such question (the engine's walk visits only the lines holding a CUDA idiom), so
the index is made on the first question of a file, and once: :class:`NodeIndex` numbers the nodes in
source order (pre-order: a node before what it holds, fields in order) and keeps, for each, the node
that holds it, its depth, where the nodes it holds end, and the function (or lambda) it is in. From
these a rule gets, without looking at any node again, the nodes of a type in the order it needs
(source order, ``ast.walk``'s breadth-first order, or the order of a walk with a stack), the nodes
inside a given one, and whether one node holds another.

The walk reads the field tables of :data:`~ascendify.source.scan.CHILD_FIELDS` (last field first,
as a stack is filled): operator and
context singletons and the aliases of an import are not indexed (every rule reads an import whole).
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterable, Iterator
from functools import cached_property

from ascendify.source.scan import CHILD_FIELDS_LAST_FIRST

# Nodes that open a scope of their own for the names bound in them.
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_SCOPE_TYPES = frozenset(SCOPES)


class NodeIndex:
    """The nodes of one module, numbered in source order (pre-order) by one walk. The walk keeps
    each node's holder and type; depths, scopes, ends and the numbers by node are worked out from
    these on first use (a question about a file's names needs none of them)."""

    def __init__(self, module: ast.Module) -> None:
        # The loop runs once per node of the file (hundreds of thousands in a large one): its
        # look-ups are bound to local names, and the field tables list the fields in push order.
        nodes: list[ast.AST] = []
        parents: list[int] = []
        by_type: dict[type[ast.AST], list[int]] = {}
        stack: list[tuple[ast.AST, int]] = [(module, -1)]
        push, pop = stack.append, stack.pop
        add_node, add_parent, fields_of = nodes.append, parents.append, CHILD_FIELDS_LAST_FIRST
        number = -1
        while stack:
            node, parent = pop()
            number += 1
            add_node(node)
            add_parent(parent)
            kind = type(node)
            found = by_type.get(kind)
            if found is None:
                by_type[kind] = [number]
            else:
                found.append(number)
            for name in fields_of[kind]:
                value = getattr(node, name)
                if type(value) is list:  # of nodes, or None for the key of a ``**`` entry
                    for child in reversed(value):
                        if child is not None:
                            push((child, number))
                elif isinstance(value, ast.AST):
                    push((value, number))
        self.nodes = nodes
        self.parents = parents  # the number of the node holding each (-1: the module)
        self._by_type = by_type

    @cached_property
    def depths(self) -> list[int]:
        """How many nodes hold each node."""
        depths = [0] * len(self.nodes)
        for number, parent in enumerate(self.parents):
            if parent >= 0:
                depths[number] = depths[parent] + 1
        return depths

    @cached_property
    def scopes(self) -> list[int]:
        """The number of the nearest function or lambda holding each node (0: the module)."""
        nodes, scopes = self.nodes, [0] * len(self.nodes)
        for number, parent in enumerate(self.parents):
            if parent > 0:
                scopes[number] = parent if type(nodes[parent]) in _SCOPE_TYPES else scopes[parent]
        return scopes

    @cached_property
    def last(self) -> list[int]:
        """The last number inside each node (its own when it holds none)."""
        last, parents = list(range(len(self.nodes))), self.parents
        # Backwards, a node's last child comes first, and its own end is known by then.
        for number in range(len(last) - 1, 0, -1):
            parent = parents[number]
            if last[parent] == parent:
                last[parent] = last[number]
        return last

    @cached_property
    def _numbers(self) -> dict[int, int]:
        return {id(node): number for number, node in enumerate(self.nodes)}

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
