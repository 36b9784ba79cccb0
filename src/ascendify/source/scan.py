"""The cheap pre-scan: byte tokens that any line a rule can fire on holds, found before parsing.

A file without one is never decoded or parsed. In a parsed file, only statements spanning a line that
holds a token (or a local name bound to a name that holds one: ``autocast(...)`` after ``from
torch.cuda.amp import autocast``) are walked; everything else is skipped unvisited.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

Enter = Callable[[ast.AST, ast.AST | None], bool]


class Occurrences:
    """Where tokens occur in one file's bytes: each token is searched once per file, however many
    consumers (the migration, the analysis) ask for it."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        # ast ends a line at a lone "\r" too: then lines cannot be numbered by counting "\n".
        self.numbered = b"\r" not in data.replace(b"\r\n", b"")
        self._found: dict[bytes, list[int]] = {}

    def of(self, word: bytes) -> list[int]:
        found = self._found.get(word)
        if found is None:
            found = self._found[word] = []
            position = self.data.find(word)
            while position != -1:
                found.append(position)
                position = self.data.find(word, position + 1)
        return found


@dataclass(frozen=True)
class Tokens:
    """A set of byte tokens, searched with ``bytes.find`` one token at a time: for the few dozen
    literal tokens of a rule set that is several times faster than one regular-expression
    alternation, which ``re`` scans byte by byte."""

    words: tuple[bytes, ...]
    _names: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, tokens: Iterable[bytes]) -> Tokens:
        """Tokens; one containing another is redundant ("CUDA" finds "CUDA_VISIBLE_DEVICES").
        Shorter tokens are tried first: they are the common ones, and :meth:`found_in` stops at
        the first token found (-30% on torch's tree)."""
        unique = set(tokens)
        kept = (token for token in unique if not any(o != token and o in token for o in unique))
        return cls(tuple(sorted(kept, key=lambda token: (len(token), token))))

    def found_in(self, data: bytes) -> bool:
        return any(word in data for word in self.words)

    def in_name(self, name: str) -> bool:
        """Whether a (qualified) name holds a token; remembered (a project repeats its imports)."""
        found = self._names.get(name)
        if found is None:
            found = self._names[name] = self.found_in(name.encode())
        return found

    def lines(self, occurrences: Occurrences, bound_names: Iterable[str] = ()) -> list[int] | None:
        """Sorted numbers of the lines holding a token or one of ``bound_names`` as a word; None
        when lines cannot be numbered (see :class:`Occurrences`)."""
        if not occurrences.numbered:
            return None
        data = occurrences.data
        positions = [position for word in self.words for position in occurrences.of(word)]
        names = sorted(bound_names)
        if names:
            pattern = rb"\b(?:" + b"|".join(re.escape(name.encode()) for name in names) + rb")\b"
            positions.extend(match.start() for match in re.finditer(pattern, data))
        positions.sort()
        lines: list[int] = []
        line, previous = 1, 0
        for position in positions:
            line += data.count(b"\n", previous, position)
            previous = position
            if not lines or lines[-1] != line:
                lines.append(line)
        return lines


# Operator and context singletons (``Load``, ``Add``, ``Eq`` ...) carry no position or name: never
# visited, which spares a third of the nodes of a typical file.
_SINGLETONS = (ast.expr_context, ast.operator, ast.cmpop, ast.boolop, ast.unaryop)
_PRUNABLE = (ast.stmt, ast.excepthandler)
# Fields without a node worth visiting: those singletons, names, flags.
_NO_NODES = frozenset(
    {"ctx", "op", "ops", "id", "attr", "arg", "name", "names", "module", "level", "kind",
     "conversion", "simple", "is_async", "type_comment", "kwd_attrs"}
)  # fmt: skip
_CHILD_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {}  # filled on first sight of a node type


def child_fields(kind: type[ast.AST]) -> tuple[str, ...]:
    """The fields of a node type that may hold nodes worth visiting (a constant's value never
    does); a list there holds nodes only, or None for the key of a ``**`` entry in a dict display.
    For walks that look for a few node types: fewer fields to read than :func:`ast.iter_fields`."""
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        fields = (
            () if kind is ast.Constant else tuple(f for f in kind._fields if f not in _NO_NODES)
        )
        _CHILD_FIELDS[kind] = fields
    return fields


def walk_touching(module: ast.Module, lines: list[int] | None, enter: Enter) -> None:
    """Visit nodes parents first, calling ``enter(node, parent)``; its answer says whether to look
    inside. Statements that span no line of ``lines`` (None: every line) are skipped whole. A stack
    instead of recursion: valid code can nest deeper than Python's recursion limit. Children are
    pushed field by field, so a node's fields are visited last field first (each list in order):
    the order the rules' findings have always come in."""

    def touches(node: ast.stmt | ast.excepthandler) -> bool:
        if lines is None:
            return True
        # A decorated definition starts at its first decorator, above the line of its ``def``.
        decorators = getattr(node, "decorator_list", None)
        first = decorators[0].lineno if decorators else node.lineno
        index = bisect.bisect_left(lines, first)
        return index < len(lines) and lines[index] <= (node.end_lineno or node.lineno)

    stack: list[tuple[ast.AST, ast.AST | None]] = [(module, None)]
    push = stack.append
    while stack:
        node, parent = stack.pop()
        if not enter(node, parent):
            continue
        for name in node._fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for child in reversed(value):
                    # match_case has no position of its own; its body is pruned.
                    if isinstance(child, ast.AST) and (
                        not isinstance(child, _PRUNABLE) or touches(child)
                    ):
                        push((child, node))
            elif isinstance(value, ast.AST) and not isinstance(value, _SINGLETONS):
                push((value, node))
