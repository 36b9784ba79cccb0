"""The rich consoles the commands print their tables on.

On a terminal a table fits the window. Written to a pipe or a file, rich would fold it to 80
columns and cut identifiers and paths in half (``src/models/resn`` / ``et.py:12``); there the console
is as wide as the widest line needs, so every cell stays whole and a line can be searched for.
"""

from __future__ import annotations

import sys
from typing import IO, Any

from rich.console import Console

PIPE_WIDTH = 100_000  # wider than any line a table holds: the table is as wide as its cells


def console(*, stderr: bool = False, file: IO[str] | None = None, **options: Any) -> Console:
    """A console on stdout (stderr, or ``file``), folding only on a terminal."""
    stream = file if file is not None else (sys.stderr if stderr else sys.stdout)
    terminal = hasattr(stream, "isatty") and stream.isatty()
    width = None if terminal else PIPE_WIDTH
    return Console(stderr=stderr, file=file, width=width, **options)
