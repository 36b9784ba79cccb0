"""Text read from logs, made safe to print on a terminal and to serve to a page.

A rank's log is written by the user's program and by whatever it runs: its lines can hold escape
sequences (colours, cursor moves, a title change), a carriage return that makes a terminal write
over what came before, or a right-to-left override that shows a line in another order than it is
stored. :func:`printable` drops colour and other escape sequences (what is left reads as the line
meant) and NUL bytes (the zeros a crash leaves in a file), and writes every other control character
as a visible escape (``\\x0d``, ``\\u202e``), so that what ascendify prints or serves from a log is
what the log says, and nothing more. A file's name keeps its escape sequences, made visible
(``sequences=False``): the name shown must be the file's.
"""

from __future__ import annotations

import re
from typing import Any

# CSI (colours, cursor moves), OSC (window titles, links; ended by BEL or ST) and the two-byte
# escapes: each a bounded pattern without nested repetition, linear in the text.
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b(?:\[[0-?]{0,64}[ -/]{0,8}[@-~]|\][^\x07\x1b]{0,4096}(?:\x07|\x1b\\)?|[@-Z\\-_])"
)
# C0 and C1 controls but tab and line end, DEL, and the marks that reorder or flip text.
_CONTROL = re.compile("[\x01-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str, sequences: bool = True) -> str:
    """``text`` without escape sequences (``sequences``) and NUL bytes, its other control
    characters written as escapes; tabs and line ends are kept (a report's lines stay lines)."""
    if text.isascii() and text.isprintable():
        return text  # most log lines: nothing to do
    if sequences:
        text = _ESCAPE_SEQUENCE.sub("", text)
    return _CONTROL.sub(_escape, text.replace("\0", ""))


def printable_path(path: object) -> str:
    """A file's name as text safe to show: every control character escaped, none dropped."""
    return printable(str(path), sequences=False)


def printable_data(value: Any) -> Any:
    """:func:`printable` applied to every string of a JSON-like value (and to its keys)."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable_data(key): printable_data(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [printable_data(item) for item in value]
    return value


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
