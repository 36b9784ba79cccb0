"""Run one node of a job: its steps in order, output appended to the worker log; stoppable.

Used by the local engine's runner (one thread per node) and inside the Ray engine's tasks. Each
step runs in its own session; on Linux it also dies with the process that started it, so a
runner or Ray worker killed outright takes its node agents (and they their ranks) along.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

import psutil

from ascendify.jobs.plan import NodePlan
from ascendify.launch.containment import tree

POLL = 0.1
# After the grace period the launcher has SIGKILLed its ranks; this is for its final upload.
UPLOAD_ALLOWANCE = 60.0
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class NodeResult:
    node: int
    exit_code: int
    failed_step: str | None  # a pre-start step that failed, None when the launcher ran
    lost: bool = False  # the step itself was killed by a signal (it did not exit)


Started = Callable[[int, psutil.Process], None]


def run_node(
    plan: NodePlan,
    *,
    cwd: Path,
    log_path: Path,
    stop: threading.Event,
    grace_period: float,
    started: Started | None = None,
) -> NodeResult:
    """Run ``plan``'s steps; ``stop`` ends the current step: SIGTERM, then SIGKILL to its tree."""
    cwd.mkdir(parents=True, exist_ok=True)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **plan.env}
    with log_path.open("ab", buffering=0) as log:  # unbuffered: a failed note leaves nothing
        for step in plan.steps:
            if stop.is_set():
                return NodeResult(plan.node, 128 + signal.SIGTERM, step.what)
            _note(log, f"node {plan.node}: {step.what}")
            process = subprocess.Popen(
                step.argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=die_with_parent if sys.platform == "linux" else None,  # noqa: PLW1509
            )
            if started is not None:
                started(plan.node, psutil.Process(process.pid))
            raw = _wait(process, stop, grace_period)
            code = exit_code(raw)
            if code != 0:
                _note(log, f"node {plan.node}: {step.what} exited with {code}")
                last = step is plan.steps[-1]
                return NodeResult(plan.node, code, None if last else step.what, lost=raw < 0)
    return NodeResult(plan.node, 0, None)


def _wait(process: subprocess.Popen[bytes], stop: threading.Event, grace_period: float) -> int:
    while process.poll() is None:
        if stop.wait(POLL):
            _stop(process, grace_period)
            break
    return process.wait()


def _stop(process: subprocess.Popen[bytes], grace_period: float) -> None:
    """SIGTERM a step (a node agent then stops its ranks and uploads outputs); kill what stays.

    The launcher ends its ranks within its own grace period, then uploads the outputs: that is
    what the wait allows for. Anything of the step's tree still running after it is killed.
    """
    descendants = tree(process.pid)[1:]
    process.terminate()
    try:
        process.wait(grace_period + UPLOAD_ALLOWANCE)
    except subprocess.TimeoutExpired:
        process.kill()
    kill([found for found in descendants if _running(found)])


def kill(processes: list[psutil.Process]) -> None:
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(processes, timeout=5)


def _running(process: psutil.Process) -> bool:
    with contextlib.suppress(psutil.Error):
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    return False


def exit_code(code: int) -> int:
    """As a shell reports it: 128 + N for a process killed by signal N."""
    return 128 - code if code < 0 else code


def _note(log: IO[bytes], message: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())  # ISO 8601, as every view
    with contextlib.suppress(OSError):  # a full disk loses the note, not the node
        log.write(f"[ascendify job {stamp}] {message}\n".encode())
        log.flush()


def kept(plan: NodePlan, python: str) -> NodePlan:
    """``plan`` with every step run under :mod:`ascendify.jobs.keeper` (see there why)."""
    keeper = (python, "-m", "ascendify.jobs.keeper")
    steps = tuple(replace(step, argv=(*keeper, *step.argv)) for step in plan.steps)
    return replace(plan, steps=steps)


def die_with_parent() -> None:
    """In the child before exec: SIGTERM when the parent dies (Linux ``PR_SET_PDEATHSIG``)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
