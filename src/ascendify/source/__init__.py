"""Python source as every part of ascendify reads it: bytes decoded the way Python decodes them, one
parse, names resolved through imports, suppression comments, and the byte pre-scan that spares
files (and statements) no rule can fire on. Migration and analysis both build on this package and
never on each other.
"""

from __future__ import annotations

from ascendify.source.names import (
    STATEMENT_LISTS,
    Binding,
    LocalScope,
    NameResolver,
    dotted_parts,
    import_bindings,
    resolve_imports,
    statements,
)
from ascendify.source.nodes import SCOPES, NodeIndex
from ascendify.source.parsed import (
    PARSE_ERRORS,
    ParsedSource,
    SharedParse,
    collector_paused,
    parse_source,
)
from ascendify.source.scan import CHILD_FIELDS, Occurrences, Tokens, walk_touching
from ascendify.source.text import SourceText, UndecodableSource, decode, encode, is_suppressed

__all__ = [
    "CHILD_FIELDS",
    "PARSE_ERRORS",
    "SCOPES",
    "STATEMENT_LISTS",
    "Binding",
    "LocalScope",
    "NameResolver",
    "NodeIndex",
    "Occurrences",
    "ParsedSource",
    "SharedParse",
    "SourceText",
    "Tokens",
    "UndecodableSource",
    "collector_paused",
    "decode",
    "dotted_parts",
    "encode",
    "import_bindings",
    "is_suppressed",
    "parse_source",
    "resolve_imports",
    "statements",
    "walk_touching",
]
