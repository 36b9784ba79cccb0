"""Restarts: run a job's attempts until one succeeds or ``--max-restarts`` are used up.

Each attempt is one run of :class:`~ascendify.launch.agent.Agent`: when a rank fails (non-zero
exit, a signal), a node is lost or the job hangs, the agent has stopped every rank of every node
(grace, then kill) by the time it returns, and the next attempt starts from scratch: a new
assignment (on many nodes: a new rendezvous under the attempt's number in the same store), a new
port for the ranks, a new rank table, ``ASCENDIFY_RESTART_COUNT`` and
``TORCHELASTIC_RESTART_COUNT`` set to the attempt's number. The ranks' output folders are kept:
a script that checkpoints into its ``train_url`` and loads the checkpoint when it finds one
resumes where the last attempt got to; ``--resume-from-latest PATTERN`` also hands it the newest
complete matching file as ``--resume=<path>`` (see :mod:`ascendify.launch.resume`).

A stop signal, a rank that cannot start and the last attempt's failure end the job. The history
of the attempts goes into ``run_summary.json`` (``attempts``).
"""

from __future__ import annotations

import contextlib
import json
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import IO, Any

from ascendify.launch.agent import Agent, Peers, RunResult, write_summary
from ascendify.launch.plan import NodeAssignment, local_assignment, plan_node
from ascendify.launch.ports import free_port
from ascendify.launch.restart import restart_told, restarts
from ascendify.launch.resume import StoppedAttempt, latest_checkpoint
from ascendify.launch.spec import LaunchSpec
from ascendify.runfolder import SUMMARY_NAME

# How an attempt gets its assignment and peers; the callable says a stop signal came meanwhile.
Meet = Callable[[int, Callable[[], bool]], tuple[NodeAssignment, Peers | None]]
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def run_attempts(
    spec: LaunchSpec,
    console: IO[bytes] | None,
    log: Callable[[str], None],
    output_dir: Path | None,
) -> RunResult:
    """Run attempts of the job on this node; the result of the last one, with the history.

    ``output_dir`` is where a relative ``--resume-from-latest`` pattern looks (the local folder
    of ``train_url``; the working directory without one).
    """
    history: list[dict[str, Any]] = []
    stopped: list[StoppedAttempt] = []  # attempts whose ranks were stopped: what they left
    result: RunResult | None = None
    with _meetings(spec) as (first, meet), _SignalsNoted() as noted:
        attempt = first
        while True:
            started = time.time()
            try:
                assignment, peers = meet(attempt, noted.came)
                attempt = getattr(peers, "attempt", attempt)  # a late node is taken in a later one
            except Exception as error:
                if noted.signum is None:
                    if result is None:
                        raise
                    log(f"restart {attempt} could not start: {error}")
                    return result
            resume = (
                None
                if noted.came()
                else _resume_path(spec, output_dir, stopped, noted, attempt=attempt, log=log)
            )
            if noted.signum is not None:
                return _stopped_before(attempt, noted.signum, result, spec.log_dir)
            plan = plan_node(spec, assignment, attempt, resume)
            result = Agent(plan, peers, console, pending_signal=noted.take, log=log).run()
            if result.teardown is not None:
                stopped.append(result.teardown)
            failure = result.root_cause
            if result.state == "succeeded" and peers is not None:
                failure = peers.recorded_failure()  # a node that failed after ours ended
                if failure is not None:
                    result = replace(result, state="stopped", root_cause=failure)
            history.append(
                attempt_record(attempt, started, result, getattr(peers, "membership", None))
            )
            _write_history(spec.log_dir, history)
            cause = failure.cause if failure is not None else None
            if not restarts(result.state, cause, attempt, spec.max_restarts):
                return result
            if result.stop_signal is not None or noted.signum is not None:
                # A stop signal while the attempt ended: the job ends, no attempt follows.
                signum = noted.signum if noted.signum is not None else result.stop_signal
                assert signum is not None
                return _stopped_before(attempt + 1, signum, result, spec.log_dir)
            log(restart_told(history[-1], spec.max_restarts))  # why, on the console too
            attempt += 1


def _resume_path(
    spec: LaunchSpec,
    output_dir: Path | None,
    stopped: list[StoppedAttempt],
    noted: _SignalsNoted,
    *,
    attempt: int,
    log: Callable[[str], None],
) -> Path | None:
    """The checkpoint attempt ``attempt`` resumes from, with the reasons for the files skipped."""
    found = latest_checkpoint(
        spec.resume_from_latest, output_dir or spec.cwd, tuple(stopped), noted.came
    )
    for line in found.report():
        log(f"attempt {attempt}: --resume-from-latest {line}")
    if found.path is not None:
        log(f"attempt {attempt}: --resume={found.path}")
    return found.path


@contextlib.contextmanager
def _meetings(spec: LaunchSpec) -> Iterator[tuple[int, Meet]]:
    """The first attempt's number and how each attempt gets its assignment and peers."""
    if not spec.multi_node:
        yield (
            0,
            lambda _attempt, _stop: (local_assignment(spec, spec.master_port or free_port()), None),
        )
        return
    # Only multi-node jobs need torch (its TCPStore); one node starts without importing it.
    from ascendify.launch.rendezvous import Rendezvous

    rendezvous = Rendezvous(spec)
    try:
        yield rendezvous.first_attempt(), rendezvous.meet
    finally:
        rendezvous.link.close()


def _stopped_before(attempt: int, signum: int, last: RunResult | None, log_dir: Path) -> RunResult:
    """The job stopped by ``signum`` while attempt ``attempt`` was being set up."""
    name = signal.Signals(signum).name
    message = f"stopped by {name} before attempt {attempt} started; no rank was running"
    if last is None:
        return RunResult("interrupted", 128 + signum, {}, None, log_dir, message)
    return replace(last, state="interrupted", exit_code=128 + signum, message=message)


class _SignalsNoted:
    """SIGINT and SIGTERM noted between attempts (the agent handles them while ranks run); only
    the main thread may install handlers, elsewhere the caller owns signals."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[signal.Signals, Any] = {}

    def __enter__(self) -> _SignalsNoted:
        if threading.current_thread() is threading.main_thread():
            self._previous = {sig: signal.signal(sig, self._note) for sig in STOP_SIGNALS}
        return self

    def __exit__(self, *_exc: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _note(self, signum: int, _frame: Any) -> None:
        self.signum = signum

    def came(self) -> bool:
        """Whether a stop signal came."""
        return self.signum is not None

    def take(self) -> int | None:
        """The stop signal that came, if any, for the agent (which handles signals from now)."""
        return self.signum


def attempt_record(
    attempt: int, started: float, result: RunResult, membership: dict[str, Any] | None = None
) -> dict[str, Any]:
    """One attempt as ``run_summary.json`` and ``job describe`` show it; on many nodes with the
    membership it ran with (``members``, who ``left`` and ``joined`` since the last one, when the
    nodes met and which node hosted the store)."""
    failure = result.root_cause
    record: dict[str, Any] = {
        "attempt": attempt,
        "start": started,
        "end": time.time(),
        "state": result.state,
        "cause": failure.cause if failure is not None else None,
        "reason": failure.describe(show_lines=False).splitlines()[0] if failure else None,
        "rank": failure.rank if failure is not None and failure.rank >= 0 else None,  # first
        "exit_codes": {str(rank): code for rank, code in result.exit_codes.items()},
        "stacks": {str(rank): text for rank, text in result.stacks.items()},
    }
    if membership is not None:
        record["membership"] = membership
    return record


def _write_history(log_dir: Path, history: list[dict[str, Any]]) -> None:
    """Add the attempts so far to the summary the last attempt's agent wrote."""
    path = log_dir / SUMMARY_NAME
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        summary = {}
    summary["attempts"] = history
    write_summary(path, summary)
