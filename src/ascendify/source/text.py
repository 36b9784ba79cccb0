"""Source text as the engine sees it: bytes decoded the way Python decodes them, and positions.

``ast`` reports columns as UTF-8 byte offsets into each line; edits are made on the decoded text, so
every position goes through :meth:`SourceText.offset`. The original encoding (PEP 263 cookie or BOM)
is kept so the result is encoded exactly as the input was.
"""

from __future__ import annotations

import io
import itertools
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass, field

# ast counts "\r\n", "\r" and "\n" as line ends; str.splitlines() also splits on these others.
_LINE_END = re.compile(r"\r\n?|\n")
# Searched for one at a time: a search for one character runs at memory speed, a character class
# of ``re`` a byte at a time (3% of the instructions of a migration of torch's own tree).
_OTHER_LINE_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


class UndecodableSource(Exception):
    """The bytes do not decode with the encoding the file declares."""


def decode(data: bytes) -> tuple[str, str]:
    """Decode Python source like the interpreter does: ``(text, encoding)``.

    The encoding comes from a BOM or a PEP 263 cookie and defaults to UTF-8; ``utf-8-sig`` means a
    BOM, which :func:`encode` writes back.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding), encoding
    except (SyntaxError, UnicodeDecodeError, LookupError) as error:
        raise UndecodableSource(str(error)) from error


def encode(text: str, encoding: str) -> bytes:
    return text.encode(encoding)


@dataclass
class SourceText:
    """Decoded text plus the line table needed to turn ast positions into string offsets."""

    text: str
    _line_starts: list[int] = field(default_factory=list, init=False, repr=False)
    _lines: list[str] = field(default_factory=list, init=False, repr=False)

    def _index(self) -> None:
        if not any(line_break in self.text for line_break in _OTHER_LINE_BREAKS):
            lines = self.text.splitlines(keepends=True)  # the same split, at C speed
        else:
            ends = [match.end() for match in _LINE_END.finditer(self.text)]
            starts = [0, *ends]
            lines = [self.text[a:b] for a, b in zip(starts, [*ends, len(self.text)], strict=True)]
        if not lines or lines[-1].endswith(("\n", "\r")):
            lines.append("")  # ast may point at the line after a final line end
        self._lines = lines
        self._line_starts = [0, *itertools.accumulate(map(len, lines))][:-1]

    def line(self, lineno: int) -> str:
        """The 1-based line ``lineno`` including its line end ("" past the end)."""
        if not self._line_starts:
            self._index()
        return self._lines[lineno - 1] if 0 < lineno <= len(self._lines) else ""

    def offset(self, lineno: int, byte_col: int) -> int:
        """String offset of an ast position (1-based line, UTF-8 byte column)."""
        if not self._line_starts:
            self._index()
        line = self._lines[lineno - 1]
        column = byte_col if line.isascii() else len(line.encode()[:byte_col].decode())
        return self._line_starts[lineno - 1] + column

    def newline(self) -> str:
        """The file's line ending (the first one found), for inserted lines."""
        match = _LINE_END.search(self.text)
        return match.group() if match else "\n"


_SUPPRESSION = re.compile(r"#\s*ascendify:\s*ignore(?:\[([^\]]*)\])?")


def is_suppressed(source: SourceText, lines: Iterable[int], code: str) -> bool:
    """``# ascendify: ignore`` or ``# ascendify: ignore[NPU101, AN104]`` on one of ``lines``."""
    for lineno in lines:
        match = _SUPPRESSION.search(source.line(lineno))
        if match is not None and (match[1] is None or code in re.split(r"[\s,]+", match[1])):
            return True
    return False
