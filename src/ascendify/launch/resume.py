"""``--resume-from-latest GLOB``: the newest complete checkpoint an attempt can resume from.

The search is a bounded walk of the folder the pattern names: directory links are never followed
(a training script's ``latest -> .`` would make ``**`` endless), at most :data:`MAX_ENTRIES`
entries are looked at, and a stop signal ends it at once. Only regular, non-empty files are
candidates. A file is not complete when an attempt that was stopped may have been writing it:
open for writing by one of its processes when its teardown began, or written after the
teardown began by an attempt whose processes had to be killed (one whose ranks all ended within
the grace period, as a rank that saves when asked does, finished what it wrote), or still
growing while the launcher looks at it; such files are skipped, and the log says which and why.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

# Entries the walk looks at before it settles for the newest match found so far.
MAX_ENTRIES = 200_000
# How long the chosen file must keep its size and time to count as no longer being written.
STILL_WAIT = 0.3
# File times come from a coarse clock (one kernel tick, a few ms, behind time.time()).
TIMESTAMP_SLACK = 0.01
# How many skipped files the log names (the newest ones: those that would have been chosen).
SKIPS_SHOWN = 10
_MAGIC = ("*", "?", "[")


@dataclass(frozen=True)
class StoppedAttempt:
    """What an attempt whose ranks were stopped leaves behind: when its teardown began and
    ended (wall clock), and the files its processes had open for writing then, with the
    ``(size, mtime_ns)`` each had once the teardown ended."""

    attempt: int
    began: float
    ended: float
    writing: dict[str, tuple[int, int]] = field(default_factory=dict)
    killed: bool = True  # a process was still running at the end of the grace period


@dataclass(frozen=True)
class Found:
    """The checkpoint to hand over (None: none), the files skipped and why, and a note when
    the walk stopped early."""

    path: Path | None
    skipped: tuple[tuple[str, str], ...] = ()
    note: str | None = None

    def report(self) -> list[str]:
        """The log lines that explain the choice."""
        lines = [f"skipped {path}: {why}" for path, why in self.skipped[:SKIPS_SHOWN]]
        if len(self.skipped) > SKIPS_SHOWN:
            lines.append(f"skipped {len(self.skipped) - SKIPS_SHOWN} more newer file(s)")
        if self.note:
            lines.append(self.note)
        return lines


def latest_checkpoint(
    pattern: str | None,
    folder: Path,
    stopped: tuple[StoppedAttempt, ...] = (),
    interrupted: Callable[[], bool] = lambda: False,
) -> Found:
    """The newest complete regular file matching ``pattern`` (relative ones inside ``folder``).

    ``stopped`` are the attempts whose ranks were stopped; ``interrupted()`` ends the search
    (with no file) when a stop signal came.
    """
    if not pattern:
        return Found(None)
    full = pattern if os.path.isabs(pattern) else str(folder / pattern)
    root, parts = _split(full)
    walk = _Walk(interrupted)
    candidates = sorted(walk.matches(root, parts), reverse=True)  # newest first
    if walk.interrupted:
        return Found(None)
    note = None
    if walk.entries >= MAX_ENTRIES:
        note = f"looked at the first {MAX_ENTRIES} entries under {root} only (--resume-from-latest)"
    skipped: list[tuple[str, str]] = []
    for mtime_ns, size, path in candidates:
        why = _incomplete(path, mtime_ns, size, stopped) or _still_written(path, interrupted)
        if interrupted():
            return Found(None)
        if why is None:
            return Found(Path(path), tuple(skipped), note)
        skipped.append((path, why))
    return Found(None, tuple(skipped), note)


def _split(pattern: str) -> tuple[str, list[str]]:
    """The pattern's literal leading folder and its remaining components."""
    parts = pattern.split(os.sep)
    fixed = 0
    while fixed < len(parts) - 1 and not any(m in parts[fixed] for m in _MAGIC):
        fixed += 1
    root = os.sep.join(parts[:fixed]) or (os.sep if pattern.startswith(os.sep) else os.curdir)
    return root, [part for part in parts[fixed:] if part]


class _Walk:
    """A walk below a folder that matches paths against glob components, as ``glob`` does
    (``**`` spans any number of folders, ``*`` does not match a leading dot), without
    following directory links and with at most :data:`MAX_ENTRIES` entries."""

    def __init__(self, interrupted: Callable[[], bool]) -> None:
        self.entries = 0
        self.interrupted = False
        self._stop = interrupted

    def matches(self, root: str, parts: list[str]) -> Iterator[tuple[int, int, str]]:
        """``(mtime_ns, size, path)`` of every non-empty regular file that matches.

        Each folder is listed once; ``states`` are the components its entries may match next.
        """
        if parts:
            yield from self._below(root, parts, self._closure(parts, {0}))

    @staticmethod
    def _closure(parts: list[str], states: set[int]) -> frozenset[int]:
        """``states`` plus those a ``**`` reaches by matching no folder at all."""
        todo, seen = list(states), set(states)
        while todo:
            state = todo.pop()
            if state < len(parts) - 1 and parts[state] == "**" and state + 1 not in seen:
                seen.add(state + 1)
                todo.append(state + 1)
        return frozenset(seen)

    def _below(
        self, folder: str, parts: list[str], states: frozenset[int]
    ) -> Iterator[tuple[int, int, str]]:
        last = len(parts) - 1
        for entry in self._entries(folder):
            hidden = entry.name.startswith(".")
            staying = set()  # ** spans this folder: never through a link, nor a hidden folder
            advancing = set()  # a named component matched: a link to a folder is followed
            final = False
            for state in states:
                part = parts[state]
                if part == "**":
                    final = final or (state == last and not hidden)
                    if not hidden and _is_folder(entry):
                        staying.add(state)
                elif _name_matches(entry.name, part):
                    if state == last:
                        final = True
                    elif _is_folder(entry, follow=True):
                        advancing.add(state + 1)
            if final and (found := _regular_file(entry)) is not None:
                yield (*found, entry.path)
            if staying or advancing:
                yield from self._below(entry.path, parts, self._closure(parts, staying | advancing))

    def _entries(self, folder: str) -> Iterator[os.DirEntry[str]]:
        if self.interrupted or self.entries >= MAX_ENTRIES:
            return
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    self.entries += 1
                    if self.entries >= MAX_ENTRIES:
                        return
                    if self.entries % 256 == 0 and self._stop():
                        self.interrupted = True
                        return
                    yield entry
        except OSError:
            return


def _name_matches(name: str, pattern: str) -> bool:
    if name.startswith(".") and not pattern.startswith("."):
        return False
    return fnmatch.fnmatchcase(name, pattern)


def _is_folder(entry: os.DirEntry[str], follow: bool = False) -> bool:
    try:
        return entry.is_dir(follow_symlinks=follow)
    except OSError:
        return False


def _regular_file(entry: os.DirEntry[str]) -> tuple[int, int] | None:
    """``(mtime_ns, size)`` of a non-empty regular file (a link to one counts), else None."""
    try:
        info = entry.stat()
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size == 0:
        return None
    return info.st_mtime_ns, info.st_size


def _incomplete(
    path: str, mtime_ns: int, size: int, stopped: tuple[StoppedAttempt, ...]
) -> str | None:
    """Why an attempt that was stopped may have left ``path`` half written, or None."""
    mtime = mtime_ns / 1e9
    real = os.path.realpath(path)
    for attempt in stopped:
        if attempt.killed and attempt.began - TIMESTAMP_SLACK <= mtime <= attempt.ended:
            return f"written while attempt {attempt.attempt}'s ranks were being stopped"
        if attempt.writing.get(real) == (size, mtime_ns):
            return (
                f"open for writing by a process of attempt {attempt.attempt} when its ranks "
                "were stopped, and not written since"
            )
    return None


def _still_written(path: str, interrupted: Callable[[], bool]) -> str | None:
    """Why ``path`` is still being written (its size or time changed meanwhile), or None."""
    before = _signature(path)
    deadline = time.monotonic() + STILL_WAIT
    while time.monotonic() < deadline and not interrupted():
        time.sleep(0.05)
    after = _signature(path)
    if after is None:
        return "gone while it was looked at"
    return (
        "still being written (it grew or changed while it was looked at)"
        if after != before
        else None
    )


def _signature(path: str) -> tuple[int, int] | None:
    with contextlib.suppress(OSError):
        info = os.stat(path)
        return info.st_size, info.st_mtime_ns
    return None


def files_open_for_writing(pids: list[int]) -> set[str]:
    """The regular files the processes ``pids`` have open for writing (real paths)."""
    import psutil

    found = set()
    for pid in pids:
        with contextlib.suppress(psutil.Error, OSError):
            for opened in psutil.Process(pid).open_files():
                if opened.mode != "r":
                    found.add(os.path.realpath(opened.path))
    return found


def signatures(paths: set[str]) -> dict[str, tuple[int, int]]:
    """``(size, mtime_ns)`` of each path that still exists."""
    return {path: sig for path in paths if (sig := _signature(path)) is not None}
