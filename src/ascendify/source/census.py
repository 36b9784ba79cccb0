"""Counting what reading code costs: parses and node visits, for the guard that keeps every file at
one parse and one walk that all rules share (``tests/test_census.py``).

Nothing is counted outside :func:`counting`, so the walks pay nothing for it. Inside, a parse is a
call of ``ast.parse`` (the length of its source is kept: a file's own text, or a snippet such as
the project pass's import lines), and a visit is one node looked inside, whichever way: the field
tables of this package (:data:`~ascendify.source.scan.CHILD_FIELDS`, in either order, and the
statement lists), which every walk of ascendify uses, or ``ast.iter_fields``, under ``ast.walk``,
``ast.iter_child_nodes`` and ``ast.NodeVisitor``. A rule that walks a file on its own is counted either way.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ascendify.source.names import _STATEMENT_LISTS_OF, FieldsByType
from ascendify.source.scan import CHILD_FIELDS, CHILD_FIELDS_LAST_FIRST

_TABLES = (CHILD_FIELDS, CHILD_FIELDS_LAST_FIRST, _STATEMENT_LISTS_OF)


@dataclass
class Census:
    """Parses and visits since :func:`counting` began (read them as differences, file by file)."""

    parsed: list[int] = field(default_factory=list)  # the length of each parse's source
    visits: int = 0

    def parses_of(self, length: int, since: int = 0) -> int:
        """The parses since the ``since``-th of a source of ``length`` characters (a whole file)."""
        return sum(1 for parsed in self.parsed[since:] if parsed == length)


class _CountingFields(FieldsByType):
    census: Census | None = None

    def __getitem__(self, kind: type[ast.AST]) -> tuple[str, ...]:
        if self.census is not None:
            self.census.visits += 1
        return super().__getitem__(kind)


@contextmanager
def counting() -> Iterator[Census]:
    """Count parses and visits in this process until the block ends."""
    census = Census()
    parse, iter_fields = ast.parse, ast.iter_fields

    def counted_parse(source: Any, *args: Any, **kwargs: Any) -> Any:
        census.parsed.append(len(source))
        return parse(source, *args, **kwargs)

    def counted_fields(node: ast.AST) -> Iterator[tuple[str, Any]]:
        census.visits += 1
        return iter_fields(node)

    patched: list[tuple[Any, str, Callable[..., Any]]] = [
        (ast, "parse", counted_parse),
        (ast, "iter_fields", counted_fields),
    ]
    for owner, name, replacement in patched:
        setattr(owner, name, replacement)
    _CountingFields.census = census
    for table in _TABLES:
        table.__class__ = _CountingFields
    try:
        yield census
    finally:
        for table in _TABLES:
            table.__class__ = FieldsByType
        _CountingFields.census = None
        ast.parse, ast.iter_fields = parse, iter_fields
