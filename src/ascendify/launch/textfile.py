"""Read the small text files the launcher is given (rank tables, hccn.conf) without surprises.

Only regular files of bounded size are read: a FIFO would block the launcher forever and
``/dev/zero`` would fill its memory. Every problem but a missing file (which a caller may wait
for) becomes one :class:`AscendifyError` naming the file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ascendify.errors import AscendifyError

MAX_BYTES = 16 * 2**20  # far above any real rank table (about 150 bytes per device)


def read_text(path: Path, what: str, error: type[AscendifyError] = AscendifyError) -> str:
    """The UTF-8 text of ``path``; ``what`` names it in messages. FileNotFoundError passes."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer before we can refuse it.
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise
    except OSError as problem:
        raise error(f"{what} {path} cannot be read: {problem.strerror}") from None
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise error(f"{what} {path} is {kind}")
    with open(descriptor, "rb") as handle:
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise error(f"{what} {path} is larger than {MAX_BYTES // 2**20} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as problem:
        raise error(
            f"{what} {path} is not UTF-8 text (byte {data[problem.start]:#04x} at offset "
            f"{problem.start})"
        ) from None
