"""Read the small files ascendify is given (rank tables, hccn.conf, job specs) without surprises.

The one bounded reader: a file is read only if it is a regular file (checked before it is opened,
and opened non-blocking: a FIFO would block forever, ``/dev/zero`` would fill the memory), only up
to a size limit, and its data is parsed with a depth limit (a structure nested thousands deep makes
the parsers recurse until Python gives up). Reads go through :func:`ascendify._fs.read_source`;
links are resolved first, as platforms mount these files through links. Every problem but a missing
file (which a caller may wait for) becomes one :class:`AscendifyError` naming the file.
"""

from __future__ import annotations

import errno
import json
import os
import re
from array import array
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path
from typing import Any

from ascendify._fs import Missing, NotRead, TooLarge, read_source, resolved
from ascendify.errors import AscendifyError

MAX_BYTES = 16 * 2**20  # far above any real rank table (about 150 bytes per device) or job spec
MAX_DEPTH = 32  # rank tables nest 5 deep, job specs 2
# A JSON file's values, parsed, take about 100 bytes each: a million is 100 MB. A rank table of 1,024
# servers of 64 devices holds under 300,000.
MAX_JSON_VALUES = 1_000_000


def read_text(
    path: Path, what: str, error: type[AscendifyError] = AscendifyError, limit: int = MAX_BYTES
) -> str:
    """The UTF-8 text of ``path``; ``what`` names it in messages. FileNotFoundError passes."""
    try:
        data = read_source(resolved(path), limit).data
    except Missing:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path)) from None
    except TooLarge:
        raise error(f"{what} {path} is larger than {limit // 2**20} MiB") from None
    except NotRead as reason:
        # Reasons are either a kind of file ("a directory") or a failure ("cannot read: ...").
        verb = "" if str(reason).startswith("cannot") else "is "
        raise error(f"{what} {path} {verb}{reason}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as problem:
        raise error(
            f"{what} {path} is not UTF-8 text (byte {data[problem.start]:#04x} at offset "
            f"{problem.start})"
        ) from None


def read_json(path: Path, what: str, error: type[AscendifyError] = AscendifyError) -> Any:
    """The JSON document in ``path``, read and parsed within the limits.

    ``json.JSONDecodeError`` passes (a platform may be half-way through writing the file).
    """
    return parse_json(read_text(path, what, error), f"{what} {path}", error)


def parse_json(text: str, what: str, error: type[AscendifyError]) -> Any:
    """``json.loads(text)``, refused before parsing when nested over :data:`MAX_DEPTH` or holding more
    than :data:`MAX_JSON_VALUES` values (what it would take in memory once parsed)."""
    problem = _json_shape_problem(text)
    if problem is not None:
        raise error(f"{what} {problem}")
    return json.loads(text)


# The shape of a JSON text, in C (str.replace, bytes.translate, re, itertools): escapes and strings
# dropped, then only brackets kept (both kinds as one: json.loads checks that they match), then the
# deepest point of the running count of open brackets. A 16 MiB table of 5 million objects is judged
# in under a second, where walking the parsed objects took 30 s and a gigabyte.
# Once escapes are gone, a string is one repeated character between quotes: no backtracking.
_JSON_STRING = re.compile(r'"[^"]*"')
_ONE_KIND = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKET = bytes(set(range(256)) - set(b"[]{}"))
_STEPS = bytes.maketrans(b"[]", b"\x01\xff")  # +1 and -1 as signed bytes


def _json_shape_problem(text: str) -> str | None:
    """Why a JSON text is too deep or too large to parse; None when it is neither.

    Unbalanced brackets are not judged here: json.loads names them.
    """
    unescaped = text.replace("\\\\", "").replace('\\"', "")  # pairs first: \\" ends a string
    outside = _JSON_STRING.sub('""', unescaped).encode("utf-8", "surrogatepass")
    brackets = outside.translate(_ONE_KIND, _NOT_BRACKET)
    too_deep = f"is nested too deeply (more than {MAX_DEPTH} levels)"
    # A run of more opening brackets than the limit is too deep at once.
    if re.search(rb"(?<!\[)\[{%d}" % (MAX_DEPTH + 1), brackets):  # tried where a run starts: linear
        return too_deep
    # Each container of n values holds n - 1 commas; an empty one ([] or {}) none. Keys are not counted.
    empty = outside.count(b"[]") + outside.count(b"{}")
    values = outside.count(b",") + brackets.count(b"[") - empty + 1
    if values > MAX_JSON_VALUES:
        return f"holds more than {MAX_JSON_VALUES:,} values"
    # The innermost level everywhere (most of a document's containers) goes first: one less to count.
    inner = brackets.replace(b"[]", b"")
    steps = array("b", inner.translate(_STEPS))
    if inner != brackets and max(accumulate(steps), default=0) >= MAX_DEPTH:
        return too_deep
    return None


def parse_bounded(
    parse: Callable[[str], Any], text: str, what: str, error: type[AscendifyError]
) -> Any:
    """``parse(text)`` (a TOML or YAML loader; JSON goes through :func:`parse_json`), refused when
    nested over :data:`MAX_DEPTH`."""
    try:
        data = parse(text)
    except RecursionError:
        data = None
    else:
        if _depth_within(data, MAX_DEPTH):
            return data
    raise error(f"{what} is nested too deeply (more than {MAX_DEPTH} levels)")


def _depth_within(data: Any, limit: int) -> bool:
    """Whether lists and tables in ``data`` nest at most ``limit`` deep, walked level by level.

    YAML aliases share one object among many places (a "billion laughs" spec shares it
    exponentially often): each level holds an object once, so each is walked at most ``limit`` times.
    """
    level = {id(data): data} if isinstance(data, dict | list) else {}
    for _ in range(limit):
        level = {
            id(child): child
            for value in level.values()
            for child in (value.values() if isinstance(value, dict) else value)
            if isinstance(child, dict | list)
        }
        if not level:
            return True
    return False
