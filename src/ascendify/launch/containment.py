"""Keep every process of a job inside the job: ranks die with their launcher, strays are found.

Three layers, because each one alone has a hole:

* each rank asks the kernel for SIGKILL when its launcher dies (Linux ``PR_SET_PDEATHSIG``), so a
  SIGKILLed launcher leaves no rank behind;
* each rank carries a job marker in its environment (:data:`MARKER`), inherited by everything it
  starts, so a child that left the rank's session and was re-parented (``setsid``, a double fork)
  is still recognisable at teardown, when it is no longer a descendant of anything we know;
* while the job runs, the descendants of every rank are recorded, which also catches children
  that scrubbed their environment, as long as they lived for one look.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import uuid
from collections.abc import Callable, Collection, Iterable

import psutil

MARKER = "ASCENDIFY_JOB_MARKER"
_PR_SET_PDEATHSIG = 1


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


class Strays:
    """The processes a job started besides its ranks, recorded while it runs and swept at the end."""

    def __init__(self, marker: str) -> None:
        self.marker = marker
        self._seen: dict[int, psutil.Process] = {}

    def record(self, ranks: Collection[int]) -> None:
        """Remember every current descendant of ``ranks`` (pids of rank processes)."""
        children: dict[int, list[int]] = {}
        for process in psutil.process_iter(["ppid"]):
            children.setdefault(process.info["ppid"], []).append(process.pid)
        pending = list(ranks)
        while pending:
            for pid in children.get(pending.pop(), ()):
                if pid not in self._seen:
                    with contextlib.suppress(psutil.Error):
                        self._seen[pid] = psutil.Process(pid)
                    pending.append(pid)

    def find(self, ranks: Collection[int]) -> list[psutil.Process]:
        """Every live process of the job that is not a rank: recorded, descendants and marked."""
        self.record(ranks)
        found = dict(self._seen)
        for process in psutil.process_iter(["environ"]):
            if (process.info["environ"] or {}).get(MARKER) == self.marker:
                found.setdefault(process.pid, process)
        found.pop(os.getpid(), None)
        return [p for pid, p in found.items() if pid not in ranks and _alive(p)]


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
