"""The one exception type the command line turns into a clean message and exit code 2."""

from __future__ import annotations


class AscendifyError(Exception):
    """A problem with the user's input or environment, explained in the message."""
