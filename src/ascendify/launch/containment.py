"""Keep every process of a job inside the job: ranks die with their launcher, strays are found.

Five layers, because each one alone has a hole:

* each rank asks the kernel for SIGKILL when its launcher dies (Linux ``PR_SET_PDEATHSIG``), so a
  SIGKILLed launcher leaves no rank behind;
* each rank carries a job marker in its environment (:data:`MARKER`), inherited by everything it
  starts, so a child that left the rank's session and was re-parented (``setsid``, a double fork)
  is still recognisable at teardown, when it is no longer a descendant of anything we know;
* while the job runs, the descendants of every rank are recorded, which also catches children
  that scrubbed their environment, as long as they lived for one look;
* the launcher is the "child subreaper" of everything below it (Linux ``PR_SET_CHILD_SUBREAPER``):
  a process orphaned by a double fork is re-parented to the launcher, not to init, so a daemon that
  scrubbed its environment and left the tree before any look is still found among its children;
* a small watchdog process (:class:`Watchdog`, in its own session) learns those records and, if
  the launcher dies without its teardown, stops everything marked or recorded.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator

import psutil

MARKER = "ASCENDIFY_JOB_MARKER"
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def new_marker() -> str:
    """A value of :data:`MARKER` unique to one agent."""
    return uuid.uuid4().hex


def die_with_launcher() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child die with the calling thread's process (Linux only).

    The kernel sends the signal when the *thread* that forked the child ends, so ranks must be
    started from a thread that lives as long as the agent (the one that runs it).
    """
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up now: the child must not load
    launcher = os.getpid()

    def bind() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != launcher:  # the launcher died before the request took effect
            os.kill(os.getpid(), signal.SIGKILL)

    return bind


@contextlib.contextmanager
def adopting_orphans() -> Iterator[None]:
    """While the block runs, orphans below this process are re-parented to it (Linux only)."""
    if not sys.platform.startswith("linux"):
        yield
        return
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    try:
        yield
    finally:
        prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


class Strays:
    """The processes a job started besides its ranks, recorded while it runs and swept at the end."""

    def __init__(self, marker: str) -> None:
        self.marker = marker
        self._seen: dict[int, psutil.Process] = {}
        self._ours: set[int] = set()  # children of the launcher that are not the job's
        self._since = time.time()

    def ignore(self, pid: int) -> None:
        """``pid`` is a child of the launcher that is not part of the job (its watchdog)."""
        self._ours.add(pid)

    def record(self, ranks: Collection[int]) -> list[psutil.Process]:
        """Remember every current descendant of ``ranks`` (pids of rank processes) and every
        orphan the launcher adopted (see :func:`adopting_orphans`); return the new ones."""
        children: dict[int, list[int]] = {}
        started: dict[int, float] = {}
        for process in psutil.process_iter(["ppid", "create_time"]):
            children.setdefault(process.info["ppid"], []).append(process.pid)
            started[process.pid] = process.info["create_time"] or 0.0
        # Children of the launcher it did not start itself: orphans it adopted during the job
        # (psutil rounds start times, hence the second of slack).
        adopted = [
            pid
            for pid in children.get(os.getpid(), ())
            if pid not in ranks and pid not in self._ours and started[pid] >= self._since - 1.0
        ]
        new = []
        pending = [*ranks, *adopted]  # the adopted ones are recorded too, with their descendants
        while pending:
            pid = pending.pop()
            if pid not in ranks and pid not in self._seen:
                with contextlib.suppress(psutil.Error):
                    self._seen[pid] = psutil.Process(pid)
                    new.append(self._seen[pid])
            # Known ones are walked again: a child seen before may have started one since.
            pending.extend(children.get(pid, ()))
        return new

    def find(self, ranks: Collection[int]) -> list[psutil.Process]:
        """Every live process of the job that is not a rank: recorded, descendants and marked."""
        self.record(ranks)
        found = {**self._seen, **{p.pid: p for p in marked(self.marker)}}
        return [p for pid, p in found.items() if pid not in ranks and _alive(p)]


def marked(marker: str) -> list[psutil.Process]:
    """The processes whose environment carries this job's marker (not this one)."""
    return [
        process
        for process in psutil.process_iter(["environ"])
        if (process.info["environ"] or {}).get(MARKER) == marker and process.pid != os.getpid()
    ]


class Watchdog:
    """A process that stops the job if the launcher dies without tearing it down (a SIGKILL).

    It reads the pids the launcher recorded from a pipe; at the launcher's ``close`` it just ends,
    and when the pipe ends without it, it sweeps the job as the teardown would have.
    """

    def __init__(self, marker: str, grace_period: float) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-c", _WATCHDOG, marker, str(grace_period)],
            stdin=subprocess.PIPE,
            # Holding the launcher's output open would keep `ascendify run ... | tee` waiting.
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C or a killpg aimed at the launcher must miss it
        )

    @property
    def pid(self) -> int:
        return self._process.pid

    def watch(self, processes: Iterable[psutil.Process]) -> None:
        lines = "".join(f"{p.pid} {p.create_time()}\n" for p in processes if _alive(p))
        self._send(lines.encode())

    def close(self) -> None:
        """Tell the watchdog the teardown is done; it ends on its own, the launcher need not wait."""
        self._send(_DONE)
        with contextlib.suppress(OSError):
            self._process.stdin.close()  # type: ignore[union-attr]

    def _send(self, data: bytes) -> None:
        with contextlib.suppress(OSError, psutil.Error):
            self._process.stdin.write(data)  # type: ignore[union-attr]
            self._process.stdin.flush()  # type: ignore[union-attr]


_DONE = b"done\n"
_WATCHDOG = (
    "import sys; from ascendify.launch.containment import _watch; "
    "_watch(sys.argv[1], float(sys.argv[2]))"
)


def _watch(marker: str, grace_period: float) -> None:
    """The watchdog's body: collect pids until the launcher says done or is gone."""
    recorded: list[psutil.Process] = []
    for line in sys.stdin.buffer:
        if line == _DONE:
            return
        pid, created = line.split()
        with contextlib.suppress(psutil.Error):
            process = psutil.Process(int(pid))
            if process.create_time() == float(created):  # not a new process under an old pid
                recorded.append(process)
    job = {p.pid: p for p in (*recorded, *marked(marker))}.values()
    signal_all(job, signal.SIGTERM)
    _gone, alive = psutil.wait_procs(list(job), timeout=grace_period)
    signal_all(alive, signal.SIGKILL)


def tree(pid: int) -> list[psutil.Process]:
    """``pid`` and every process below it (empty when it is gone)."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def signal_all(processes: Iterable[psutil.Process], sig: signal.Signals) -> None:
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.send_signal(sig)  # psutil checks the pid still names the same process


def still_alive(processes: Iterable[psutil.Process]) -> list[psutil.Process]:
    """Those still running; our own children among the ended ones are reaped."""
    alive = []
    for process in processes:
        with contextlib.suppress(psutil.TimeoutExpired, psutil.Error, ChildProcessError):
            process.wait(timeout=0)  # reaps a child; raises TimeoutExpired while it runs
        if _alive(process):
            alive.append(process)
    return alive


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
