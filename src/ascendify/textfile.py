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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ascendify._fs import Missing, NotRead, TooLarge, read_source, resolved
from ascendify.errors import AscendifyError

MAX_BYTES = 16 * 2**20  # far above any real rank table (about 150 bytes per device) or job spec
MAX_DEPTH = 32  # rank tables nest 5 deep, job specs 2


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
    return parse_bounded(json.loads, read_text(path, what, error), f"{what} {path}", error)


def parse_bounded(
    parse: Callable[[str], Any], text: str, what: str, error: type[AscendifyError]
) -> Any:
    """``parse(text)`` (json.loads, a TOML or YAML loader), refused when nested over :data:`MAX_DEPTH`."""
    try:
        data = parse(text)
    except RecursionError:
        data = None
    else:
        if _depth_within(data, MAX_DEPTH):
            return data
    raise error(f"{what} is nested too deeply (more than {MAX_DEPTH} levels)")


def _depth_within(data: Any, limit: int) -> bool:
    """Whether lists and tables in ``data`` nest at most ``limit`` deep (a walk without recursion).

    YAML aliases share one object among many places (a "billion laughs" spec shares it
    exponentially often): an object is walked again only when reached deeper than before, so
    each is walked at most ``limit`` times.
    """
    deepest: dict[int, int] = {}
    pending = [(data, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, dict):
            children = list(value.values())
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            return False
        if deepest.get(id(value), 0) >= depth:
            continue
        deepest[id(value)] = depth
        pending.extend((child, depth + 1) for child in children)
    return True
