"""Hang detection: a job whose ranks all fall silent and make no progress, and the Python stack
of every rank.

A silence is ``--hang-timeout`` seconds without a piece of output, nor a heartbeat (see
:mod:`ascendify.heartbeat`), from any rank of the job (of any node: the nodes add their counts to
a counter in the rendezvous store). Until the first piece of output of an attempt the allowance
is at least :data:`START_ALLOWANCE`: starting Python and importing torch on a busy machine takes
seconds of silence that are no hang.

A silence is a hang only when no rank moves (:class:`ProgressProbe`): the I/O counters of each
rank's process tree and the CPU time of its processes' main threads are read twice,
:func:`sample_interval` apart, and when none moved, the Python stacks of every rank are taken
twice. A rank that read or wrote (a checkpoint being saved), whose main thread computed (a tight
loop is at the same line in every stack) or whose stack changed is busy: the timeout starts again.

The stacks come from faulthandler, armed in every Python process of every rank by the launcher's
start hook (:mod:`ascendify.launch.starthook`): SIGUSR1 makes a process write the stack of each
of its threads to a file of its own and go on, so every rank (on every node) is caught where it
waits, before any of them is stopped. Only processes whose file exists and that still catch
SIGUSR1 are signalled: SIGUSR1 would end one that did not arm, or that dropped the handler.
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
# How long the processes may take to write their stacks. The wait ends as soon as every file has
# grown; on a loaded machine a process blocked in a collective can take seconds to be scheduled.
STACK_DUMP_WAIT = 10.0
_SETTLE = 0.05
# A busy rank silent this many times the timeout is reported (then each time its silence doubled).
BUSY_REPORT_FACTOR = 2.0
# A rank whose main threads used this share of the time between two samples in CPU time computes.
# A main thread blocked in a wait (a lock, a collective, a socket) uses none.
BUSY_CPU_SHARE = 0.1
# The stack-dump signal, which the start hook's faulthandler catches.
DUMP_SIGNAL = signal.SIGUSR1


def sample_interval(timeout: float) -> float:
    """How far apart the two samples of a progress probe are taken."""
    return min(5.0, max(0.5, timeout / 4))


class Silence:
    """When the job last showed life: a rank's output or heartbeat on this node, a busy rank, or,
    through peers, any of these anywhere.

    ``output`` is called by the output threads (one integer and one float assignment each: no
    lock needed for a value read only to compare against a timeout).
    """

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.pieces = 0  # pieces of output (and busy verdicts) of this node's ranks
        self.last = time.monotonic()
        self.quiet_since = self.last  # the last output or heartbeat, which busy ranks do not move
        self._job_total = -1

    def output(self) -> None:
        self.pieces += 1
        self.last = self.quiet_since = time.monotonic()

    def busy(self) -> None:
        """A silent rank moved: life, counted for the peers too, but the silence goes on."""
        self.pieces += 1
        self.last = time.monotonic()

    def job_output(self, total: int) -> None:
        """The job's output count as the peers report it; a change is life somewhere."""
        if total != self._job_total:
            self._job_total = total
            self.last = time.monotonic()

    def hung(self, now: float) -> bool:
        """Whether the silence is long enough to look for progress."""
        if self.timeout <= 0:
            return False
        allowed = self.timeout if self.pieces or self._job_total > 0 else START_ALLOWANCE
        return now - self.last >= allowed


@dataclass(frozen=True)
class RankProcess:
    rank: int
    pid: int


@dataclass(frozen=True)
class Moved:
    """A silent rank that made progress between two samples, and how."""

    rank: int
    how: str


STILL = "still"
NOT_CAUGHT = (
    f"no stack: the process no longer catches {DUMP_SIGNAL.name} (the start hook's handler was "
    "replaced or removed), so it was not signalled"
)  # the verdict when no rank moved: a hang


class ProgressProbe:
    """Whether a silent job still makes progress: samples taken step by step, so the agent
    keeps supervising (exits, stop signals) meanwhile.

    :meth:`step` is called while the job is silent, with the time its silence began; a new
    silence starts a new probe. First the I/O counters of each rank's process tree (bytes read
    and written, through any file, pipe or socket) are read twice; when none moved, the Python
    stacks of every armed process are taken twice, ``interval`` apart. The stacks of the last
    sample are kept for the hang's report.
    """

    def __init__(self, folder: Path, interval: float) -> None:
        self.folder = folder
        self.interval = interval
        self.stacks: dict[
            int, str
        ] = {}  # by rank, from the last sample of a probe that found none moved
        self.signalled: set[int] = set()  # pids sent the stack-dump signal
        self._since: float | None = None
        self._due = 0.0
        self._io: dict[int, tuple[int, ...]] = {}
        self._cpu: dict[int, float] = {}
        self._sampled = 0.0
        self._first_stacks: dict[int, dict[int, str]] | None = None

    def step(self, ranks: Sequence[RankProcess], since: float, now: float) -> Moved | str | None:
        """:class:`Moved`, :data:`STILL`, or None while the samples are being taken."""
        if since != self._since:
            self._since, self._first_stacks = since, None
            self._take_counters(ranks, now)
            self._due = now + self.interval
            return None
        if now < self._due:
            return None
        io, cpu, before = self._io, self._cpu, self._sampled
        self._take_counters(ranks, now)
        moved = next((Moved(rank, _io_change(io[rank], self._io[rank])) for rank in self._io
                      if rank in io and self._io[rank] != io[rank]), None)  # fmt: skip
        moved = moved or _computed(cpu, self._cpu, now - before)
        self._due = now + self.interval
        if moved is None:
            stacks, signalled = stacks_by_process(ranks, self.folder)
            self.signalled |= signalled
            self._take_counters(ranks, time.monotonic())  # writing its stack is I/O of its own
            if self._first_stacks is None:
                self._first_stacks = stacks
                return None
            moved = stack_change(self._first_stacks, stacks)
            if moved is None:
                self.stacks = _by_rank(ranks, stacks)
                self._since = None
                return STILL
        self._since = None  # the next silence starts a new probe
        return moved

    def _take_counters(self, ranks: Sequence[RankProcess], now: float) -> None:
        self._io, self._cpu, self._sampled = _io_counters(ranks), _main_thread_cpu(ranks), now


def _main_thread_cpu(ranks: Sequence[RankProcess]) -> dict[int, float]:
    """Per rank: the CPU seconds (user and system) of the main thread of each process of its tree
    (``/proc/PID/task/PID/stat``), summed."""
    seconds = {}
    for rank in ranks:
        total = 0.0
        for process in tree(rank.pid):
            with contextlib.suppress(psutil.Error, OSError):
                main = next(t for t in process.threads() if t.id == process.pid)
                total += main.user_time + main.system_time
        seconds[rank.rank] = total
    return seconds


def _computed(before: dict[int, float], after: dict[int, float], elapsed: float) -> Moved | None:
    """The first rank whose main threads computed for a share of ``elapsed`` since ``before``."""
    for rank, seconds in after.items():
        used = seconds - before.get(rank, seconds)
        if elapsed > 0 and used >= BUSY_CPU_SHARE * elapsed:
            return Moved(rank, f"its main thread computed {used:.1f}s of CPU in {elapsed:.1f}s")
    return None


def _io_counters(ranks: Sequence[RankProcess]) -> dict[int, tuple[int, ...]]:
    """Per rank: the pids of its tree and their summed I/O counters (a process that ended or
    started changes the tuple too: the rank moved)."""
    counters = {}
    for rank in ranks:
        pids, chars = [], [0, 0, 0, 0]
        for process in tree(rank.pid):
            with contextlib.suppress(psutil.Error, AttributeError, OSError):
                io = process.io_counters()
                pids.append(process.pid)
                values = (
                    getattr(io, "read_chars", io.read_bytes),
                    getattr(io, "write_chars", io.write_bytes),
                    io.read_count,
                    io.write_count,
                )
                chars = [a + b for a, b in zip(chars, values, strict=True)]
        counters[rank.rank] = (*chars, *sorted(pids))
    return counters


def _io_change(before: tuple[int, ...], after: tuple[int, ...]) -> str:
    if before[4:] != after[4:]:
        return "its processes changed (one started or ended)"
    read, written = after[0] - before[0], after[1] - before[1]
    return f"it read {read} and wrote {written} bytes"


def stack_change(
    first: dict[int, dict[int, str]], second: dict[int, dict[int, str]]
) -> Moved | None:
    """The first rank one of whose processes shows another Python stack in ``second``."""
    for rank, stacks in second.items():
        for pid, text in stacks.items():
            before = first.get(rank, {}).get(pid)
            if before is None or 'File "' not in before or 'File "' not in text:
                continue  # not sampled twice, or caught outside Python code
            if _normalized(before) != _normalized(text):
                return Moved(rank, f"the Python stack of process {pid} moved")
    return None


def _normalized(stack: str) -> str:
    # The thread that runs the handler is marked "Current thread": the kernel picks any thread.
    return stack.replace("Current thread", "Thread")


def dump_stacks(ranks: Sequence[RankProcess], folder: Path) -> tuple[dict[int, str], set[int]]:
    """The Python stacks of every armed process of every rank, by global rank, and the pids
    sent the dump signal.

    A rank with children (data-loader workers) gets theirs after its own, each headed by its pid.
    """
    stacks, signalled = stacks_by_process(ranks, folder)
    return _by_rank(ranks, stacks), signalled


def _by_rank(ranks: Sequence[RankProcess], stacks: dict[int, dict[int, str]]) -> dict[int, str]:
    texts = {}
    for rank in ranks:
        parts = [
            (f"process {pid}:\n" if pid != rank.pid else "") + text
            for pid, text in stacks.get(rank.rank, {}).items()
        ]
        texts[rank.rank] = "\n".join(part for part in parts if part.strip()) or (
            "no stack: the rank's processes did not load the launcher's start hook"
        )
    return texts


def stacks_by_process(
    ranks: Sequence[RankProcess], folder: Path
) -> tuple[dict[int, dict[int, str]], set[int]]:
    """One sample: by rank, the stack each armed process wrote now, by pid; and the pids
    that were sent the dump signal."""
    hooked = {rank.rank: [p for p in tree(rank.pid) if _file(folder, p).exists()] for rank in ranks}
    armed = {rank: [p for p in processes if _catches(p.pid)] for rank, processes in hooked.items()}
    every = [p for processes in armed.values() for p in processes]
    offsets = {p.pid: _size(_file(folder, p)) for p in every}
    _sample(every, folder)
    # A process caught outside Python code (in the garbage collector, say) is asked once more:
    # the stack must name where the rank waits.
    again = [p for p in every if 'File "' not in _read(_file(folder, p), offsets[p.pid])]
    for process in again:
        offsets[process.pid] = _size(_file(folder, process))
    _sample(again, folder)
    stacks = {
        rank: {p.pid: _answer(folder, p, offsets) for p in processes}
        for rank, processes in hooked.items()
    }
    return stacks, {p.pid for p in every}


def _answer(folder: Path, process: psutil.Process, offsets: dict[int, int]) -> str:
    """What ``process`` wrote since it was signalled, or why there is nothing."""
    if process.pid not in offsets:
        return NOT_CAUGHT
    return _read(_file(folder, process), offsets[process.pid]) or (
        f"no stack: the process was sent {DUMP_SIGNAL.name} but wrote nothing in {STACK_DUMP_WAIT:.0f}s"
    )


def _catches(pid: int) -> bool:
    """Whether ``pid`` catches :data:`DUMP_SIGNAL` (the start hook's handler is still there); where
    ``/proc`` cannot tell, the file the hook wrote says so."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (DUMP_SIGNAL - 1) & 1)
    except (OSError, ValueError, IndexError):
        pass
    return True


def _sample(processes: list[psutil.Process], folder: Path) -> None:
    """Ask each process for its stacks (appended to its file) and wait until they are written."""
    files = [_file(folder, p) for p in processes]
    before = [_size(path) for path in files]
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.send_signal(DUMP_SIGNAL)
    if processes:
        _settle(files, before)


def _file(folder: Path, process: psutil.Process) -> Path:
    return folder / f"{process.pid}.txt"


def _settle(files: list[Path], before: list[int]) -> None:
    """Until every file grew past its size ``before`` and stopped growing, or
    :data:`STACK_DUMP_WAIT` passed."""
    deadline = time.monotonic() + STACK_DUMP_WAIT
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


def _read(path: Path, offset: int = 0) -> str:
    """What the process wrote to ``path`` from ``offset`` on (one sample's stacks)."""
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            return handle.read().decode("utf-8", errors="replace").rstrip()
    except OSError:
        return ""
