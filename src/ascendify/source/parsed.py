"""One file, decoded and parsed once, for every consumer (migration, analysis).

:func:`parse_source` raises what went wrong (:class:`~ascendify.source.text.UndecodableSource`,
``SyntaxError``, ``ValueError`` for NUL bytes, ``RecursionError``/``MemoryError`` for code nested
deeper than the compiler takes); each consumer words the reason in its own reports.
"""

from __future__ import annotations

import ast
import gc
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from ascendify.source.names import NameResolver, resolve_imports
from ascendify.source.scan import Occurrences
from ascendify.source.text import SourceText, UndecodableSource, decode


@dataclass
class ParsedSource:
    data: bytes  # the file as read
    encoding: str  # PEP 263 cookie or BOM ("utf-8-sig"), else "utf-8"
    source: SourceText  # the decoded text with its line table
    module: ast.Module
    occurrences: Occurrences  # where trigger tokens are, each found once
    names: NameResolver = field(init=False)  # every import and alias of the file

    def __post_init__(self) -> None:
        self.names = resolve_imports(self.module)

    @property
    def text(self) -> str:
        return self.source.text


def parse_source(data: bytes, occurrences: Occurrences | None = None) -> ParsedSource:
    """Decode ``data`` as Python does and parse it (raises; see the module docstring).
    ``occurrences``: what the pre-scan found in ``data`` already."""
    text, encoding = decode(data)
    with warnings.catch_warnings():
        # Invalid escapes and the like are the user's business, not noise on our console.
        warnings.simplefilter("ignore")
        module = ast.parse(text)
    return ParsedSource(data, encoding, SourceText(text), module, occurrences or Occurrences(data))


# What parse_source raises for a file Python itself could not compile.
PARSE_ERRORS = (UndecodableSource, SyntaxError, ValueError, RecursionError, MemoryError)


class SharedParse:
    """The parse of one file's bytes, made on the first request and shared by every consumer (the
    migration and the analysis of one worker): a file is decoded and parsed at most once."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.occurrences = Occurrences(data)  # the pre-scan's answers, shared too
        self._result: ParsedSource | Exception | None = None

    def get(self) -> ParsedSource:
        """The parsed file; raises one of :data:`PARSE_ERRORS` (every time) if it does not parse."""
        if self._result is None:
            try:
                self._result = parse_source(self.data, self.occurrences)
            except PARSE_ERRORS as error:
                self._result = error
        if isinstance(self._result, Exception):
            raise self._result
        return self._result


@contextmanager
def collector_paused() -> Iterator[None]:
    """Work on one file without the cyclic garbage collector. A syntax tree is hundreds of thousands
    of objects without cycles (reference counting frees it): the collector's passes over them freed
    nothing and cost a fifth of a migration's CPU time on torch's own tree."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
