"""Hang detection: a job whose ranks all fall silent, and the Python stack of every rank.

A hang is ``--hang-timeout`` seconds without a piece of output from any rank of the job (of any
node: the nodes add their output counts to a counter in the rendezvous store). Until the first
piece of output of an attempt the allowance is at least :data:`START_ALLOWANCE`: starting Python
and importing torch on a busy machine takes seconds of silence that are no hang.

The stacks come from faulthandler, armed in every Python process of every rank by the launcher's
start hook (:mod:`ascendify.launch.starthook`): SIGUSR1 makes a process write the stack of each
of its threads to a file of its own and go on, so every rank (on every node) is caught where it
waits, before any of them is stopped. Only processes whose file exists are signalled: SIGUSR1
would end one that did not arm.
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil

from ascendify.launch.containment import tree

START_ALLOWANCE = 60.0
# How long the processes may take to write their stacks.
_DUMP_WAIT = 1.0
_SETTLE = 0.05


class Silence:
    """When the job last showed life: a rank's output on this node or, through peers, anywhere.

    ``output`` is called by the output threads (one integer and one float assignment each: no
    lock needed for a value read only to compare against a timeout).
    """

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.pieces = 0  # pieces of output of this node's ranks
        self.last = time.monotonic()
        self._job_total = -1

    def output(self) -> None:
        self.pieces += 1
        self.last = time.monotonic()

    def job_output(self, total: int) -> None:
        """The job's output count as the peers report it; a change is life somewhere."""
        if total != self._job_total:
            self._job_total = total
            self.last = time.monotonic()

    def hung(self, now: float) -> bool:
        if self.timeout <= 0:
            return False
        allowed = self.timeout if self.pieces or self._job_total > 0 else START_ALLOWANCE
        return now - self.last >= allowed


@dataclass(frozen=True)
class RankProcess:
    rank: int
    pid: int


def dump_stacks(ranks: Sequence[RankProcess], folder: Path) -> dict[int, str]:
    """The Python stacks of every armed process of every rank, by global rank.

    A rank with children (data-loader workers) gets theirs after its own, each headed by its pid.
    """
    armed = {rank.rank: [p for p in tree(rank.pid) if _file(folder, p).exists()] for rank in ranks}
    every = [p for processes in armed.values() for p in processes]
    _sample(every, folder)
    # A process caught outside Python code (in the garbage collector, say) is asked once more:
    # the stack must name where the rank waits.
    _sample([p for p in every if 'File "' not in _read(_file(folder, p))], folder)
    stacks = {}
    for rank in ranks:
        parts = [
            (f"process {p.pid}:\n" if p.pid != rank.pid else "") + _read(_file(folder, p))
            for p in armed[rank.rank]
        ]
        stacks[rank.rank] = "\n".join(part for part in parts if part.strip()) or (
            "no stack: the rank's processes did not load the launcher's start hook"
        )
    return stacks


def _sample(processes: list[psutil.Process], folder: Path) -> None:
    """Ask each process for its stacks (appended to its file) and wait until they are written."""
    files = [_file(folder, p) for p in processes]
    before = [_size(path) for path in files]
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.send_signal(signal.SIGUSR1)
    if processes:
        _settle(files, before)


def _file(folder: Path, process: psutil.Process) -> Path:
    return folder / f"{process.pid}.txt"


def _settle(files: list[Path], before: list[int]) -> None:
    """Until every file grew past its size ``before`` and stopped growing, or
    :data:`_DUMP_WAIT` passed."""
    deadline = time.monotonic() + _DUMP_WAIT
    sizes = [-1] * len(files)
    while time.monotonic() < deadline:
        time.sleep(_SETTLE)
        now = [_size(path) for path in files]
        grown = all(size > old for size, old in zip(now, before, strict=True))
        if grown and now == sizes:
            return
        sizes = now


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").rstrip()
    except OSError:
        return ""
