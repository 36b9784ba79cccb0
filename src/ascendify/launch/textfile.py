"""Read the small text files the launcher is given (rank tables, hccn.conf) without surprises.

Reads go through :func:`ascendify._fs.read_source` (regular files of bounded size only: a FIFO
would block the launcher forever and ``/dev/zero`` would fill its memory); links are resolved
first, as platforms mount these files through links. Every problem but a missing file (which a
caller may wait for) becomes one :class:`AscendifyError` naming the file.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from ascendify._fs import Missing, NotRead, TooLarge, read_source, resolved
from ascendify.errors import AscendifyError

MAX_BYTES = 16 * 2**20  # far above any real rank table (about 150 bytes per device)


def read_text(path: Path, what: str, error: type[AscendifyError] = AscendifyError) -> str:
    """The UTF-8 text of ``path``; ``what`` names it in messages. FileNotFoundError passes."""
    try:
        data = read_source(resolved(path), MAX_BYTES).data
    except Missing:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path)) from None
    except TooLarge:
        raise error(f"{what} {path} is larger than {MAX_BYTES // 2**20} MiB") from None
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
