"""The cheap pre-scan: byte tokens that any line a rule can fire on holds, found before parsing.

A file without one where code may use it (a comment, a doctest or a sentence of a docstring does not
count) is never decoded or parsed. In a parsed file, only the nodes (statements and their parts)
spanning a line that holds a token (or a local name bound to a name that holds one:
``autocast(...)`` after ``from torch.cuda.amp import autocast``) are walked; everything else is
skipped unvisited.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property

from ascendify.source.names import FieldsByType

# What a regular expression's \\b counts as part of a word, in bytes.
_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
# What an identifier may hold, in bytes: a word's, and those of the UTF-8 letters Python allows.
_IDENTIFIER_BYTES = _WORD_BYTES | frozenset(range(0x80, 0x100))

# Where each token is found without a search of its own: inside a shorter string whose places are
# found first, its anchor ("NCCL" in "NCCL_DEBUG", or ".to(" that ".to(0" ... ".to(9" start with),
# at an offset. A search of the whole file per token was most of the pre-scan's cost: ~100 tokens,
# each a pass over every file; checking a token at the few places of its anchor costs far less,
# and a file without the anchor holds none of the tokens anchored in it.
_ANCHORS: dict[bytes, tuple[bytes, int]] = {}
_KNOWN: set[bytes] = set()
# A stem anchors words without a token inside them: at least this long (a shorter one, as "dev",
# is everywhere in code) and shared by at least this many of them.
_SHORTEST_STEM = 4
_STEM_SHARED_BY = 3
# An anchor found more often than once in 2**7 bytes is no shortcut: checking each of its places
# costs more than a search of the file.
_SPARSE_SHIFT = 7


def _know(words: Iterable[bytes]) -> None:
    """Add ``words`` to the tokens searched for, and work out every token's anchor again."""
    _KNOWN.update(words)
    _ANCHORS.clear()
    _ANCHORS.update(_anchors(_KNOWN, _KNOWN))
    unanchored = _KNOWN - _ANCHORS.keys()
    _ANCHORS.update(_anchors(unanchored, _stems(unanchored)))


def _anchors(words: set[bytes], inside: set[bytes]) -> Iterator[tuple[bytes, tuple[bytes, int]]]:
    """Each word with the longest of ``inside`` in it (the fewest places to check), if any."""
    for word in words:
        inner = [other for other in inside if len(other) < len(word) and other in word]
        if inner:
            anchor = max(inner, key=len)
            yield word, (anchor, word.index(anchor))


def _stems(words: set[bytes]) -> set[bytes]:
    """The longest beginnings that at least :data:`_STEM_SHARED_BY` words share (".to(")."""
    sharing: dict[bytes, set[bytes]] = {}
    for word in words:
        for end in range(_SHORTEST_STEM, len(word)):
            sharing.setdefault(word[:end], set()).add(word)
    # The longest: the words sharing it go on with different bytes.
    return {
        stem
        for stem, sharers in sharing.items()
        if len(sharers) >= _STEM_SHARED_BY and len({word[len(stem)] for word in sharers}) > 1
    }


Enter = Callable[[ast.AST, ast.AST | None], bool]

# What comes before a word that code may use, spaces and line breaks aside: an attribute's dot, a
# string's quote, an argument's "(", "," or "=", a subscript's "[", a backslash continuation, or
# the keyword of an import. Prose ("double check", "the local rank") has a word before it instead.
_CODE_BEFORE = frozenset(b".,([='\"\\")
_IMPORT_KEYWORDS = (b"import", b"from")
_BLANK = frozenset(b" \t\r\n\f")
_LINE_ENDS = frozenset(b"\r\n")


def _used_as_code(data: bytes, position: int) -> bool:
    """Whether the word at ``position`` may be code's: see :data:`_CODE_BEFORE`. A line break after
    a line holding a comment counts too (``from torch import (  # why`` and the names below it).
    Never on a line that shows it is prose (:func:`_in_prose`)."""
    before, crossed_line = position - 1, False
    while before >= 0 and data[before] in _BLANK:
        crossed_line = crossed_line or data[before] in _LINE_ENDS
        before -= 1
    if before < 0:
        return True
    if data[before] in _CODE_BEFORE or data.endswith(_IMPORT_KEYWORDS, 0, before + 1):
        return not _in_prose(data, position)
    return crossed_line and data.rfind(b"#", _line_start(data, before), before + 1) != -1


def _in_prose(data: bytes, position: int) -> bool:
    """Whether the line holding ``position`` shows it is text for people there: after a ``#`` that
    no quote comes before on the line (a comment), or on a doctest line (``>>>``, which no line of
    code starts with)."""
    head = data[_line_start(data, position) : position]
    comment = head.find(b"#")
    if comment != -1:
        return b"'" not in head[:comment] and b'"' not in head[:comment]
    return head.lstrip().startswith(b">>>")


def _line_start(data: bytes, position: int) -> int:
    """Where the line holding ``position`` starts (after a "\\n" or a lone "\\r")."""
    return max(data.rfind(b"\n", 0, position), data.rfind(b"\r", 0, position)) + 1


def _identifier_start(data: bytes, position: int) -> int:
    """Where the identifier holding ``position`` starts (``is_cuda`` for the "cuda" in it)."""
    while position > 0 and data[position - 1] in _IDENTIFIER_BYTES:
        position -= 1
    return position


class Occurrences:
    """Where tokens occur in one file's bytes: each token is searched once per file, however many
    consumers (the migration, the analysis) ask for it."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._present: dict[bytes, bool] = {}
        self._found: dict[bytes, list[int]] = {}
        self._names: dict[bytes, list[int]] = {}
        self._code: dict[bytes, bool] = {}
        self._used: dict[bytes, bool] = {}

    @cached_property
    def numbered(self) -> bool:
        """Whether lines can be numbered by counting "\\n" (ast also ends a line at a lone "\\r")."""
        return b"\r" not in self.data or b"\r" not in self.data.replace(b"\r\n", b"")

    def has(self, word: bytes) -> bool:
        present = self._present.get(word)
        if present is None:
            anchored = word in _ANCHORS
            present = self._present[word] = bool(self.of(word)) if anchored else word in self.data
        return present

    def of(self, word: bytes) -> list[int]:
        """The positions of ``word``, overlapping ones included."""
        found = self._found.get(word)
        if found is None:
            found = self._found[word] = self._search(word)
        return found

    def _search(self, word: bytes) -> list[int]:
        """At the places of the word's anchor (see :data:`_ANCHORS`) when they are few, else by a
        search of the whole file (none when :meth:`has` found it absent)."""
        data, anchor = self.data, _ANCHORS.get(word)
        if anchor is not None:
            inner, offset = anchor
            places = self.of(inner)
            if len(places) <= len(data) >> _SPARSE_SHIFT:
                return [
                    place - offset
                    for place in places
                    if place >= offset and data.startswith(word, place - offset)
                ]
        elif not self.has(word):
            return []
        found = []
        position = data.find(word)
        while position != -1:
            found.append(position)
            position = data.find(word, position + 1)
        return found

    def of_name(self, name: bytes) -> list[int]:
        """The positions of ``name`` as a whole word (no ASCII letter, digit or ``_`` beside it),
        the way a regular expression's ``\\b`` sees words in bytes."""
        found = self._names.get(name)
        if found is None:
            data, end = self.data, len(self.data)
            found = self._names[name] = [
                position
                for position in self.of(name)
                if (position == 0 or data[position - 1] not in _WORD_BYTES)
                and (position + len(name) == end or data[position + len(name)] not in _WORD_BYTES)
            ]
        return found

    def in_code(self, name: bytes) -> bool:
        """Whether ``name`` occurs as a whole word where code may use it (see :func:`_used_as_code`):
        the word of an identifier, attribute, import or string that a rule or the analysis can
        match, never only in prose."""
        found = self._code.get(name)
        if found is None:
            data = self.data
            found = self._code[name] = any(
                _used_as_code(data, position) for position in self.of_name(name)
            )
        return found

    def used(self, token: bytes) -> bool:
        """Whether ``token`` occurs where code may use it, inside a word or not: an identifier
        holding it (``is_cuda`` for "cuda") must be one code may use (:func:`_used_as_code`), and
        a token that is not an identifier's bytes (``.to(0``) must not stand in a comment."""
        found = self._used.get(token)
        if found is None:
            data = self.data
            if _WORD_BYTES.issuperset(token):
                found = any(
                    _used_as_code(data, _identifier_start(data, position))
                    for position in self.of(token)
                )
            else:
                found = any(not _in_prose(data, position) for position in self.of(token))
            self._used[token] = found
        return found

    def line_numbers(self, positions: list[int]) -> list[int]:
        """The sorted, distinct numbers of the lines holding ``positions`` (sorted), counting only
        once per line however many positions it holds."""
        data, lines = self.data, []
        line, counted, index = 1, 0, 0
        while index < len(positions):
            position = positions[index]
            line += data.count(b"\n", counted, position)
            lines.append(line)
            counted = data.find(b"\n", position)
            if counted == -1:
                break
            index = bisect.bisect_left(positions, counted, index + 1)
        return lines


@dataclass(frozen=True)
class Tokens:
    """A set of byte tokens, searched with ``bytes.find`` one token at a time: for the few dozen
    literal tokens of a rule set that is several times faster than one regular-expression
    alternation, which ``re`` scans byte by byte.

    A token counts only where code may use it (:meth:`Occurrences.used`: a file that says "CUDA"
    only in its comments and doctests is not parsed), and one of the ``whole`` words only where,
    besides, no ASCII letter, digit or ``_`` touches it (the word "compile" finds torch.compile but
    not "compiled", "_compile" or "recompile"; :meth:`Occurrences.in_code`: a file saying "double
    check" is not parsed for ``.double()``). Whole words are the names of things code refers to: an
    identifier, an attribute, a module, a string's exact value. Every rule fires on code alone: a
    name it resolves is imported or reached through an attribute, a value it reads is a string."""

    words: tuple[bytes, ...]
    whole: frozenset[bytes] = frozenset()
    _names: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)
    # For in_name: the whole words that are identifiers (whole in a dotted name exactly when a part
    # of it), and every other token (searched for in the name's bytes).
    _identifiers: frozenset[bytes] = field(init=False, compare=False, repr=False)
    _others: tuple[bytes, ...] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        identifiers = frozenset(w for w in self.whole if _WORD_BYTES.issuperset(w))
        object.__setattr__(self, "_identifiers", identifiers)
        object.__setattr__(self, "_others", tuple(w for w in self.words if w not in identifiers))

    @classmethod
    def of(cls, tokens: Iterable[bytes] = (), words: Iterable[bytes] = ()) -> Tokens:
        """Tokens found anywhere and whole ``words``. A token containing another token is
        redundant ("CUDA" finds "CUDA_VISIBLE_DEVICES"), and so is a word containing one; a word
        inside a longer one is not ("cuda" as a word does not find "is_cuda"). Shorter tokens are
        tried first: they are the common ones, and :meth:`found_in` stops at the first token found
        (-30% on torch's tree)."""
        anywhere = set(tokens)
        kept = {t for t in anywhere if not any(o != t and o in t for o in anywhere)}
        whole = {w for w in words if not any(t in w for t in anywhere)}
        every = tuple(sorted(kept | whole, key=lambda token: (len(token), token)))
        _know(every)
        return cls(every, frozenset(whole))

    def found_in(self, occurrences: Occurrences) -> bool:
        """Whether the file holds a token (each answer is kept for the file's other consumers)."""
        return self._any_in(occurrences, self.words)

    def _any_in(self, occurrences: Occurrences, words: tuple[bytes, ...]) -> bool:
        return any(
            occurrences.in_code(word) if word in self.whole else occurrences.used(word)
            for word in words
        )

    def in_name(self, name: str) -> bool:
        """Whether a (qualified) name holds a token; remembered (a project repeats its imports)."""
        found = self._names.get(name)
        if found is None:
            encoded = name.encode()
            if not encoded.isascii():  # a part may touch a word without being it ("cudaé")
                found = self.found_in(Occurrences(encoded))
            else:
                parts = encoded.split(b".")
                found = not self._identifiers.isdisjoint(parts) or self._any_in(
                    Occurrences(encoded), self._others
                )
            self._names[name] = found
        return found

    def lines(self, occurrences: Occurrences, bound_names: Iterable[str] = ()) -> list[int] | None:
        """Sorted numbers of the lines holding a token or one of ``bound_names`` as a word; None
        when lines cannot be numbered (see :attr:`Occurrences.numbered`)."""
        if not occurrences.numbered:
            return None
        positions = [
            position
            for word in self.words
            for position in (occurrences.of_name if word in self.whole else occurrences.of)(word)
        ]
        for name in bound_names:
            positions.extend(occurrences.of_name(name.encode()))
        positions.sort()
        return occurrences.line_numbers(positions)


# A decorated definition starts at its first decorator, above the line of its ``def``.
_DECORATED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# The parts of an f-string: Python before 3.12 gives some of them the f-string's own position.
_FSTRING_PARTS = frozenset({ast.JoinedStr, ast.FormattedValue})
# Fields without a node worth visiting: operator and context singletons (``Load``, ``Add``, ``Eq``
# ...: no position or name, a third of the nodes of a typical file), names, flags, and the aliases
# of an import (every consumer reads an import statement whole).
_NO_NODES = frozenset(
    {"ctx", "op", "ops", "id", "attr", "arg", "name", "names", "module", "level", "kind",
     "conversion", "simple", "is_async", "type_comment", "kwd_attrs"}
)  # fmt: skip


# The fields of each node type that may hold nodes worth visiting (a constant's value never
# does); a list there holds nodes only, or None for the key of a ``**`` entry in a dict display.
# For walks that look for a few node types: fewer fields to read than ``ast.iter_fields``.
CHILD_FIELDS = FieldsByType(lambda kind, name: kind is not ast.Constant and name not in _NO_NODES)
# The same, last field first: what a walk with a stack pushes (the first field is popped first).
CHILD_FIELDS_LAST_FIRST = FieldsByType(CHILD_FIELDS._wanted, last_first=True)


def walk_touching(module: ast.Module, lines: list[int] | None, enter: Enter) -> None:
    """Visit nodes parents first, calling ``enter(node, parent)``; its answer says whether to look
    inside. A node that spans no line of ``lines`` (None: every line) is skipped whole, with all it
    holds: a statement, or a part of one (the entries of a dictionary display thousands of lines
    long, only the few lines with a token among them). Nodes without a position (a function's
    ``arguments``, a comprehension's ``for``) are entered. A stack instead of recursion: valid code
    can nest deeper than Python's recursion limit. Children are pushed field by field, so a node's
    fields are visited last field first (each list in order): the order the rules' findings have
    always come in."""

    every_line, wanted = lines is None, lines or []

    def touches(node: ast.AST) -> bool:
        first: int | None = getattr(node, "lineno", None)
        if first is None:
            return True
        if isinstance(node, _DECORATED) and node.decorator_list:
            first = node.decorator_list[0].lineno
        index = bisect.bisect_left(wanted, first)
        return index < len(wanted) and wanted[index] <= (getattr(node, "end_lineno", None) or first)

    # Once per node visited: look-ups bound to local names; a list's entries are nodes, or None for
    # the key of a ``**`` entry in a dict display.
    stack: list[tuple[ast.AST, ast.AST | None]] = [(module, None)]
    push, pop, fields_of = stack.append, stack.pop, CHILD_FIELDS
    while stack:
        node, parent = pop()
        if not enter(node, parent):
            continue
        kind = type(node)
        every = every_line or kind in _FSTRING_PARTS
        for name in fields_of[kind]:
            value = getattr(node, name)
            if type(value) is list:
                for child in reversed(value):
                    if child is not None and (every or touches(child)):
                        push((child, node))
            elif isinstance(value, ast.AST) and (every or touches(value)):
                push((value, node))
