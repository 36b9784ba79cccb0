"""Read the events of a Chrome-format trace (kineto's, Ascend's ``trace_view.json``) without loading it.

Profiler traces of one rank often pass 1 GB; ``json.load`` of such a file takes several times its
size in memory. :class:`TraceReader` reads the file in chunks and hands out one event at a time:
the standard library's C decoder (``raw_decode``) parses each event from a text buffer that holds
at most a chunk or two, so memory stays flat and the speed is the decoder's. The top-level values
beside the event array (kineto's ``distributedInfo``, ``baseTimeNanoseconds``) are kept in
:attr:`TraceReader.header`. Both shapes of the format are read: ``{"traceEvents": [...], ...}`` and
a bare ``[...]``, plain or gzip-compressed (``.gz``, as ``tensorboard_trace_handler(use_gzip=True)``
writes). A file that ends early or holds something other than JSON raises
:class:`TraceError` naming the file and the character where reading stopped.
"""

from __future__ import annotations

import codecs
import gzip
import json
import re
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, NoReturn

from ascendify.errors import AscendifyError

CHUNK_CHARACTERS = 1 << 20
# A single value larger than this is not an event: the file is not a trace (or is corrupt).
MAX_VALUE_CHARACTERS = 64 << 20
EVENTS_KEY = "traceEvents"
_SPACE = re.compile(r"[ \t\n\r]*")
_COMMA = re.compile(r"[ \t\n\r]*,[ \t\n\r]*")


def open_trace(path: Path) -> gzip.GzipFile | BinaryIO:
    """The trace's bytes, unpacked as they are read when it is gzip-compressed."""
    if path.name.endswith(".gz"):
        return gzip.open(path, "rb")
    return path.open("rb")


class TraceError(AscendifyError):
    """A trace file that could not be read to its end."""


class TraceReader:
    """The events of one trace file, in file order; :attr:`header` fills as the file is read."""

    def __init__(self, path: Path, chunk_characters: int = CHUNK_CHARACTERS) -> None:
        self.path = path
        self.chunk = chunk_characters
        self.header: dict[str, Any] = {}
        # The C scanner that raw_decode wraps, called without its Python frame.
        self._scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
        self._text = ""
        self._at = 0  # position in _text
        self._dropped = 0  # characters before _text, for messages
        self._ended = False

    # -- public ---------------------------------------------------------------------------------

    def events(self) -> Iterator[Any]:
        with open_trace(self.path) as source:
            self._source = source
            self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="strict")
            opening = self._next_significant()
            if opening == "[":
                yield from self._array()
            elif opening == "{":
                yield from self._object()
            else:
                self._fail("it does not start with '{' or '['")
            if self._next_significant(required=False) != "":
                self._fail("text follows the end of the trace")

    # -- structure ------------------------------------------------------------------------------

    def _object(self) -> Iterator[Any]:
        self._at += 1
        if self._next_significant() == "}":
            self._at += 1
            return
        while True:
            key = self._value()
            if not isinstance(key, str) or self._next_significant() != ":":
                self._fail("a key of the top-level object is not followed by ':'")
            self._at += 1
            if key == EVENTS_KEY and self._next_significant() == "[":
                yield from self._array()
            else:
                self.header[key] = self._value()
            closing = self._next_significant()
            self._at += 1
            if closing == "}":
                return
            if closing != ",":
                self._fail("expected ',' or '}' between the top-level values")

    def _array(self) -> Iterator[Any]:
        self._at += 1
        if self._next_significant() == "]":
            self._at += 1
            return
        while True:
            yield self._value()
            between = _COMMA.match(self._text, self._at)
            if between is not None and between.end() < len(self._text):
                self._at = between.end()  # the usual case: the next event is in the buffer
                continue
            closing = self._next_significant()
            self._at += 1
            if closing == "]":
                return
            if closing != ",":
                self._fail("expected ',' or ']' between events")

    # -- text -----------------------------------------------------------------------------------

    def _value(self) -> Any:
        """The JSON value at the cursor; more text is read while it may be cut by the buffer's end."""
        if self._at >= len(self._text) or self._text[self._at] in " \t\n\r":
            self._next_significant()
        while True:
            try:
                value, end = self._scan(self._text, self._at)
            except StopIteration as stop:  # what raw_decode turns into "Expecting value"
                error = json.JSONDecodeError("Expecting value", self._text, stop.value)
                self._incomplete(error)
                continue
            except json.JSONDecodeError as error:
                self._incomplete(error)
                continue
            if end == len(self._text) and not self._ended:
                self._read()  # a number at the buffer's end may go on in the next chunk
                continue
            self._at = end
            return value

    def _incomplete(self, error: json.JSONDecodeError) -> None:
        """A value the decoder could not finish: read on, or fail at the file's end."""
        if self._ended:
            cut = error.msg.startswith("Unterminated") or error.pos >= len(self._text.rstrip())
            self._fail("it ends early (cut off while written?)" if cut else error.msg)
        if len(self._text) - self._at > MAX_VALUE_CHARACTERS:
            self._fail(f"a value longer than {MAX_VALUE_CHARACTERS >> 20} M characters")
        self._read()

    def _next_significant(self, required: bool = True) -> str:
        """The next character that is not white space, without consuming it ("" at the end)."""
        while True:
            self._at = _SPACE.match(self._text, self._at).end()  # type: ignore[union-attr]
            if self._at < len(self._text):
                return self._text[self._at]
            if self._ended:
                if required:
                    self._fail("it ends early")
                return ""
            self._read()

    def _read(self) -> None:
        if self._at > self.chunk:  # drop what was consumed; the rest is under a value long
            self._dropped += self._at
            self._text = self._text[self._at :]
            self._at = 0
        try:
            data = self._source.read(self.chunk)
        except (OSError, EOFError, zlib.error) as error:  # gzip: not gzip, or cut off
            self._fail(f"cannot be unpacked ({error})")
        try:
            self._text += self._utf8.decode(data, final=not data)
        except UnicodeDecodeError:
            self._fail("it is not UTF-8 text")
        self._ended = not data

    def _fail(self, reason: str) -> NoReturn:
        where = self._dropped + self._at
        raise TraceError(f"{self.path}: not a readable trace at character {where:,}: {reason}")
