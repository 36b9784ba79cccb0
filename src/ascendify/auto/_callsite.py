"""Warnings that point at the user's line, once per line (our own record, not the warnings registry)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

_OWN_PREFIXES = (str(Path(__file__).resolve().parents[1]),)
_seen: set[tuple[str, int, str]] = set()


def user_frame_location() -> tuple[str, int]:
    """File and line of the nearest caller outside ascendify."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_OWN_PREFIXES):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return ("<unknown>", 0)
    return (frame.f_code.co_filename, frame.f_lineno)


def warn_once_at_call_site(message: str) -> bool:
    """Warn with the caller's file and line, once per (line, message). Returns whether it warned."""
    filename, lineno = user_frame_location()
    key = (filename, lineno, message)
    if key in _seen:
        return False
    _seen.add(key)
    warnings.warn_explicit(f"{message} (at {filename}:{lineno})", UserWarning, filename, lineno)
    return True
