"""Run a plan: spawn every rank, stream its output, supervise, and tear everything down.

Each rank runs in its own session (process group), so a signal to the group reaches the whole
tree the rank started, and dies with the launcher (see :mod:`ascendify.launch.containment`, which
also finds the children that left the group). The first rank to fail is the root cause; the others
get SIGTERM, then SIGKILL after the grace period. SIGINT/SIGTERM to the launcher are handled the
same way, and nothing is left running when :meth:`Agent.run` returns.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import IO, Any, Protocol

from ascendify.errors import AscendifyError
from ascendify.heartbeat import HEARTBEAT_VARIABLE
from ascendify.launch.containment import (
    MARKER,
    Strays,
    Watchdog,
    adopting_orphans,
    die_with_launcher,
    new_marker,
    signal_all,
    still_alive,
    tree,
)
from ascendify.launch.hang import (
    BUSY_REPORT_FACTOR,
    DUMP_SIGNAL,
    STACK_DUMP_WAIT,
    STILL,
    Moved,
    ProgressProbe,
    RankProcess,
    Silence,
    dump_stacks,
    sample_interval,
)
from ascendify.launch.hints import hint_for
from ascendify.launch.plan import LaunchPlan, WorkerPlan, stacks_dir
from ascendify.launch.resume import StoppedAttempt, files_open_for_writing, signatures
from ascendify.runfolder import SUMMARY_NAME, times_path
from ascendify.savenow import request_save
from ascendify.textfile import parse_json, read_text

POLL_INTERVAL = 0.05
PEER_POLL_INTERVAL = 0.25
RECORD_INTERVAL = 0.5  # how often the descendants of the ranks are recorded
# How long a stop signal waits to see whether the process that ran the launcher is dying with it.
PARENT_GONE_WAIT = 2.0
# After a hang, how long a node waits for the others to take their stacks: each notices the
# failure within a peer poll and its processes answer within the dump wait (both a node's).
STACKS_TAKEN_WAIT = 2 * STACK_DUMP_WAIT + 5.0
LINE_LIMIT = 64 * 1024  # rank output without a line end is passed on in pieces of this size
_LINE_END = re.compile(rb"\r\n|\r|\n")
TAIL_LINES = 20
# Room taken for the summary when the run starts: it is written even once the logs filled the disk.
SUMMARY_ROOM = 256 * 1024
ERROR_FILE_LIMIT = 1 << 20  # a rank's error file is read up to this size...
ERROR_MESSAGE_LIMIT = 4096  # ...and its message kept up to this many characters
_NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
# Wall-clock marks beside each rank log (``rank_<r>.log.times``: "<byte offset> <epoch>" lines),
# at most one per this many seconds, so that the lines of every rank can be put in time order
# (``ascendify explain``) without changing a byte of what the rank printed.
MARK_INTERVAL = 0.05


@dataclass(frozen=True)
class RankFailure:
    """The first failure of a job: where, when, how, and the end of the rank's log."""

    node_rank: int
    rank: int
    local_rank: int
    device_id: str
    pid: int  # 0 when no process ran (it could not start, or a node failed)
    exit_code: int  # negative: killed by that signal
    time: float
    log_path: str
    last_lines: tuple[str, ...] = ()
    error: str | None = None  # from the rank's error file (torch's @record writes one)
    hint: str | None = None  # what to do, when the log shows a known cause
    cause: str = "exit"  # one of CAUSES

    def describe(self, show_lines: bool = True) -> str:
        """The report; ``show_lines=False`` when the console already showed the rank's output."""
        if self.rank < 0:  # a node, not a rank, failed (see rendezvous), or the job hung
            return f"node {self.node_rank} failed: {self.error}"
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(self.time))
        how = (
            f"killed by signal {signal_name(-self.exit_code)}"
            if self.exit_code < 0
            else f"exit code {self.exit_code}"
        )
        lines = [
            f"rank {self.rank} (node {self.node_rank}, local rank {self.local_rank}, device "
            f"{self.device_id}, pid {self.pid}) failed first at {when}: {how}",
        ]
        if self.error:
            lines.append(f"error: {self.error}")
        lines.append(f"log on node {self.node_rank}: {self.log_path}")
        if self.last_lines and show_lines:
            lines[-1] += ", last lines:"
            lines.extend(f"    {line}" for line in self.last_lines)
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)

    @classmethod
    def of_node(
        cls, node_rank: int, error: str, exit_code: int = 1, cause: str = "node"
    ) -> RankFailure:
        """A failure of a node's launcher itself (signalled, or gone), not of one of its ranks."""
        return cls(node_rank, -1, -1, "", 0, exit_code, time.time(), "", error=error, cause=cause)

    @property
    def launcher_exit_code(self) -> int:
        return self.exit_code if self.exit_code > 0 else 128 - self.exit_code


# Why an attempt ended: a rank exited non-zero or was killed ("exit"), could not start, no rank
# wrote for --hang-timeout seconds, a node was lost or failed, a launcher was stopped, or a node
# asked to join an elastic job (the nodes restart to take it in).
CAUSES = ("exit", "start", "hang", "node", "stopped", "join")
HANG_EXIT_CODE = 124  # as timeout(1) ends a command that ran too long
DUMPED = (
    f"ended by the launcher's stack-dump signal {DUMP_SIGNAL.name}, sent while the job was silent "
    "(--hang-timeout): the process had dropped the handler the start hook installs"
)


@dataclass(frozen=True)
class RunResult:
    """How a job ended on this node. ``state``: succeeded, failed, interrupted or stopped."""

    state: str
    exit_code: int
    exit_codes: dict[int, int | None]  # by global rank; negative: that signal; None: not started
    root_cause: RankFailure | None
    log_dir: Path
    message: str = ""
    stopped: frozenset[int] = frozenset()  # global ranks still running when the teardown began
    stacks: Mapping[int, str] = field(default_factory=dict)  # by global rank, after a hang
    # When ranks were still running at the teardown: what they may have left half written.
    teardown: StoppedAttempt | None = None
    stop_signal: int | None = None  # a stop signal that came while the attempt ran or ended


class Peers(Protocol):
    """The other nodes of a multi-node job (see :mod:`ascendify.launch.rendezvous`)."""

    def failure(self) -> RankFailure | None:
        """The first failure recorded by any node, or None."""

    def recorded_failure(self) -> RankFailure | None:
        """The first failure any node recorded, read once this node's ranks have ended: None
        when there is none, or when node 0 has closed the store (every node was done)."""

    def record_failure(self, failure: RankFailure) -> RankFailure:
        """Record ours unless another node was first; return the one that was first."""

    def ended(self, state: str) -> None:
        """Tell the others this node's ranks have ended: from now on it stops beating while it
        tears down (stray processes, logs), which must not read as a lost node."""

    def stacks_taken(self, timeout: float) -> None:
        """Tell the others this node has taken its ranks' stacks after a hang, then wait up to
        ``timeout`` for every node to have taken theirs: no rank may be stopped before then, or a
        rank on another node would be sampled while its collective fails, not where it hung."""

    def finish(self, state: str, interrupted: Callable[[], bool]) -> None:
        """Tell the others this node is done (node 0 waits for all before closing the store,
        until ``interrupted()`` says a stop signal came)."""

    def job_output(self, pieces: int) -> int:
        """Publish how many pieces of output this node's ranks wrote; the job's total."""


@dataclass
class _Rank:
    plan: WorkerPlan
    process: subprocess.Popen[bytes]
    log: IO[bytes]
    marks: IO[bytes] | None = None  # the log's time marks (see MARK_INTERVAL)
    written: int = 0  # bytes in the log so far, earlier attempts included
    last_mark: float = 0.0
    pumps: list[threading.Thread] = field(default_factory=list)
    log_failure: str | None = None  # why the log stopped being written (its disk filled)
    exit_code: int | None = None
    ended: float = 0.0
    stopped: bool = False  # still running when the teardown began


class Agent:
    """Spawn the ranks of one node's plan, supervise them, and stop them all at the end."""

    def __init__(
        self,
        plan: LaunchPlan,
        peers: Peers | None = None,
        console: IO[bytes] | None = None,
        pending_signal: Callable[[], int | None] = lambda: None,
        log: Callable[[str], None] = lambda line: print(f"ascendify: {line}", file=sys.stderr),
    ) -> None:
        """``pending_signal()``: a stop signal the caller noted before the agent took over;
        ``log`` gets the launcher's notes (a rank silent but busy)."""
        self.plan = plan
        self._log = log
        self._pending_signal = pending_signal
        self.peers = peers
        self.console = console if console is not None else sys.stdout.buffer
        self._console_lock = threading.Lock()
        self._ranks: list[_Rank] = []
        self._signal: int | None = None
        self._signals = 0  # how many stop signals came
        self._strays = Strays(new_marker())
        self._bind = die_with_launcher()  # ranks are started from the thread that runs the agent
        self._parent = os.getppid()
        self._silence = Silence(plan.hang_timeout)
        self._probe = ProgressProbe(
            stacks_dir(plan.log_dir, plan.attempt), sample_interval(plan.hang_timeout)
        )
        self._heartbeats: dict[Path, int] = {}  # each rank's heartbeat file: its last time seen
        self._busy_report = (0.0, 0.0)  # (quiet since, silence that gets the next report)
        self._stacks: dict[int, str] = {}
        self._teardown: StoppedAttempt | None = None

    def run(self) -> RunResult:
        self._prepare_files()
        watchdog = Watchdog(self._strays.marker, self.plan.grace_period)
        self._strays.ignore(watchdog.pid)
        with self._forwarded_signals(), adopting_orphans():
            try:
                not_started = self._start_all()
                ended = self._failed(not_started) if not_started else self._supervise(watchdog)
                state, failure = ended
                if self.peers is not None:
                    self.peers.ended(state)
                if failure is not None and failure.cause == "hang":
                    self._stacks = self._dump_stacks()
                    if self.peers is not None:
                        self.peers.stacks_taken(STACKS_TAKEN_WAIT)
            finally:
                stopped = self._stop_all()
                watchdog.close()
                for rank in self._ranks:
                    self._close(rank)
            # Still noting signals: a node stopped by a peer's failure may get its own stop signal
            # now, while node 0 waits for the others to finish; it must end as it was ending.
            return self._result(state, failure, stopped)

    # -- start ---------------------------------------------------------------------------------

    def _prepare_files(self) -> None:
        self.plan.log_dir.mkdir(parents=True, exist_ok=True)
        if self.plan.rank_table_to_write is not None and self.plan.rank_table_file is not None:
            self.plan.rank_table_file.parent.mkdir(parents=True, exist_ok=True)
            self.plan.rank_table_file.write_text(
                json.dumps(self.plan.rank_table_to_write, indent=2) + "\n", encoding="utf-8"
            )
        for worker in self.plan.workers:
            with contextlib.suppress(FileNotFoundError):
                worker.error_file.unlink()  # a stale one would blame this run for an old error
            ascend_logs = worker.env.get("ASCEND_PROCESS_LOG_PATH")
            if ascend_logs:
                Path(ascend_logs).mkdir(parents=True, exist_ok=True)
            heartbeat = worker.env.get(HEARTBEAT_VARIABLE)
            if heartbeat:
                Path(heartbeat).parent.mkdir(parents=True, exist_ok=True)
                self._heartbeats[Path(heartbeat)] = 0
        summary = self.plan.log_dir / SUMMARY_NAME
        if self.plan.attempt and summary.exists():
            return  # a restart keeps the summary of the attempts so far readable while it runs
        with contextlib.suppress(OSError), summary.open("wb") as room:
            os.posix_fallocate(room.fileno(), 0, SUMMARY_ROOM)  # kept for the summary at the end

    def _start_all(self) -> RankFailure | None:
        """Start every rank; a rank that cannot start fails the job like one that exits."""
        for worker in self.plan.workers:
            if self._signal is not None:
                return None
            try:
                self._ranks.append(self._start(worker))
            except OSError as error:
                return RankFailure(
                    node_rank=self.plan.node_rank,
                    rank=worker.rank,
                    local_rank=worker.local_rank,
                    device_id=worker.device_id,
                    pid=0,
                    exit_code=127,  # what a shell answers for a command it cannot run
                    time=time.time(),
                    log_path=str(worker.log_path),
                    error=f"could not start {worker.argv[0]!r}: {error}",
                    cause="start",
                )
        return None

    def _start(self, worker: WorkerPlan) -> _Rank:
        # A restart appends: the log keeps what the earlier attempts printed.
        log = worker.log_path.open("ab" if self.plan.attempt else "wb")
        if self.plan.attempt:
            log.write(f"[ascendify] restart {self.plan.attempt}\n".encode())
        try:
            process = subprocess.Popen(
                worker.argv,
                cwd=worker.cwd,
                env={**self.plan.inherited_env, **worker.env, MARKER: self._strays.marker},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # own process group: one killpg reaches the whole tree
                # Two syscalls, no import and no lock taken: safe although pump threads run.
                preexec_fn=self._bind,  # noqa: PLW1509
            )
        except OSError:
            log.close()
            raise
        rank = _Rank(worker, process, log, _open_marks(worker.log_path, self.plan.attempt))
        rank.written = log.tell()  # a restart appends: the offset goes on from the end
        log_lock = threading.Lock()
        for stream, mask in ((process.stdout, 1), (process.stderr, 2)):
            assert stream is not None
            shown = bool(self.plan.tee & mask) and self._shows(worker)
            pump = threading.Thread(
                target=self._pump, args=(stream, rank, log_lock, shown), daemon=True
            )
            pump.start()
            rank.pumps.append(pump)
        return rank

    def _shows(self, worker: WorkerPlan) -> bool:
        wanted = self.plan.local_ranks_filter
        return wanted is None or worker.local_rank in wanted

    def _pump(self, stream: IO[bytes], rank: _Rank, log_lock: threading.Lock, shown: bool) -> None:
        prefix = f"[rank {rank.plan.rank}]: ".encode()
        previous = b"\n"
        for piece in output_pieces(stream):
            self._silence.output()
            # Once the log cannot be written the pipe is still drained: a full pipe blocks a rank.
            with log_lock:
                if rank.log_failure is None:
                    try:
                        _mark(rank)
                        rank.log.write(piece)
                        rank.log.flush()
                        rank.written += len(piece)
                    except OSError as error:
                        rank.log_failure = _write_failure(rank.plan.log_path, error)
            if shown:
                try:
                    with self._console_lock:
                        self.console.write(_console_line(prefix, piece, previous))
                        self.console.flush()
                except (OSError, ValueError):
                    shown = False  # the console went away; the log file still gets everything
            previous = piece
        stream.close()

    # -- supervise -----------------------------------------------------------------------------

    def _supervise(self, watchdog: Watchdog) -> tuple[str, RankFailure | None]:
        next_peer_check, next_record = 0.0, time.monotonic() + RECORD_INTERVAL
        next_heartbeat_check = 0.0
        while True:
            if self._signal is not None:
                if self.peers is not None:  # the other nodes must stop too
                    self.peers.record_failure(self._stopped(self._signal))
                return "interrupted", None
            failure = self._reap()
            if failure is not None:
                return self._failed(failure)
            if all(rank.exit_code is not None for rank in self._ranks):
                lost = self._log_failure()
                return self._failed(lost) if lost is not None else ("succeeded", None)
            now = time.monotonic()
            if now >= next_record:
                watchdog.watch(self._strays.record(self._rank_pids()))
                next_record = now + RECORD_INTERVAL
            if self.peers is not None and now >= next_peer_check:
                remote = self.peers.failure()
                if remote is not None:
                    return "stopped", remote
                if self._silence.timeout > 0:
                    self._silence.job_output(self.peers.job_output(self._silence.pieces))
                next_peer_check = now + PEER_POLL_INTERVAL
            if self._silence.timeout > 0 and now >= next_heartbeat_check:
                self._read_heartbeats()
                next_heartbeat_check = now + PEER_POLL_INTERVAL
            if self._silence.hung(now):
                verdict = self._probe.step(self._rank_processes(), self._silence.last, now)
                if verdict == STILL:
                    return self._failed(self._hang())
                if isinstance(verdict, Moved):
                    self._busy(verdict, now)
            time.sleep(POLL_INTERVAL)

    def _log_failure(self) -> RankFailure | None:
        """A job whose ranks all finished fails if a log could not be kept (its disk filled)."""
        causes = [rank.log_failure for rank in self._ranks if rank.log_failure is not None]
        return RankFailure.of_node(self.plan.node_rank, causes[0]) if causes else None

    def _stopped(self, signum: int) -> RankFailure:
        """A stop signal: the platform's (the job ends), or the death of the process that ran
        this launcher (a node lost, as when a Ray worker dies: the others may restart)."""
        name = signal.Signals(signum).name
        if self._parent_gone():
            why = (
                f"node {self.plan.node_rank} lost: the process that ran its launcher ended ({name})"
            )
            return RankFailure.of_node(self.plan.node_rank, why, 128 + signum, cause="node")
        why = f"launcher stopped by {name}"
        return RankFailure.of_node(self.plan.node_rank, why, 128 + signum, cause="stopped")

    def _parent_gone(self) -> bool:
        """Whether the process that ran this launcher has ended. Its death can reach this launcher
        a moment before it is gone (a signal sent to the whole tree of a dying Ray worker), so a
        parent still there is looked at again for :data:`PARENT_GONE_WAIT` before a stop is a stop.
        """
        deadline = time.monotonic() + PARENT_GONE_WAIT
        while os.getppid() == self._parent:
            if time.monotonic() > deadline:
                return False
            time.sleep(POLL_INTERVAL)
        return True

    def _rank_processes(self) -> list[RankProcess]:
        running = [rank for rank in self._ranks if rank.process.poll() is None]
        return [RankProcess(rank.plan.rank, rank.process.pid) for rank in running]

    def _read_heartbeats(self) -> None:
        """A heartbeat file touched since the last look counts as output."""
        for path, seen in self._heartbeats.items():
            try:
                touched = path.stat().st_mtime_ns
            except OSError:
                continue
            if touched != seen:
                self._heartbeats[path] = touched
                self._silence.output()

    def _busy(self, moved: Moved, now: float) -> None:
        """A silent rank made progress: no hang; one silent far beyond the timeout is reported
        (then each time its silence doubled)."""
        self._silence.busy()
        quiet_since, next_report = self._busy_report
        if quiet_since != self._silence.quiet_since:
            next_report = BUSY_REPORT_FACTOR * self._silence.timeout
        quiet = now - self._silence.quiet_since
        if quiet >= next_report:
            self._log(
                f"rank {moved.rank} has printed nothing for {quiet:.0f}s (--hang-timeout "
                f"{self._silence.timeout:g}) but is busy ({moved.how}): not a hang"
            )
            next_report = 2 * quiet
        self._busy_report = (self._silence.quiet_since, next_report)

    def _hang(self) -> RankFailure:
        timeout = self._silence.timeout
        span = 2 * self._probe.interval
        return RankFailure.of_node(
            self.plan.node_rank,
            f"hang: no rank of the job wrote a line for {timeout:g}s (--hang-timeout), and none "
            f"made progress (no I/O, no computing, the same Python stacks) in the {span:g}s after",
            exit_code=HANG_EXIT_CODE,
            cause="hang",
        )

    def _dump_stacks(self) -> dict[int, str]:
        """Every running rank's Python stacks, taken before any rank is stopped (this node's
        own hang verdict took them already)."""
        running = [rank for rank in self._ranks if rank.process.poll() is None]
        stacks = self._probe.stacks
        if not stacks:
            folder = stacks_dir(self.plan.log_dir, self.plan.attempt)
            processes = [RankProcess(r.plan.rank, r.process.pid) for r in running]
            stacks, signalled = dump_stacks(processes, folder)
            self._probe.signalled |= signalled
        for rank in running:  # the rank's log tells it too (``job logs --rank``)
            if rank.plan.rank not in stacks:
                continue
            note = (
                f"[ascendify] hang: the stacks of rank {rank.plan.rank}\n{stacks[rank.plan.rank]}\n"
            )
            if rank.log_failure is None:
                with contextlib.suppress(OSError):
                    rank.log.write(note.encode())
                    rank.log.flush()
        return stacks

    def _failed(self, failure: RankFailure) -> tuple[str, RankFailure]:
        """Our failure, unless another node recorded one first (then we were only stopped)."""
        if self.peers is None:
            return "failed", failure
        first = self.peers.record_failure(failure)
        ours = (first.node_rank, first.rank) == (failure.node_rank, failure.rank)
        return ("failed", failure) if ours else ("stopped", first)

    def _reap(self) -> RankFailure | None:
        """Collect exits; the first non-zero one (lowest rank if simultaneous) fails the job."""
        failure = None
        for rank in self._ranks:
            if rank.exit_code is not None:
                continue
            code = rank.process.poll()
            if code is None:
                continue
            rank.exit_code, rank.ended = code, time.time()
            if code != 0 and failure is None:
                dumped = code == -DUMP_SIGNAL and rank.process.pid in self._probe.signalled
                failure = RankFailure(
                    node_rank=self.plan.node_rank,
                    rank=rank.plan.rank,
                    local_rank=rank.plan.local_rank,
                    device_id=rank.plan.device_id,
                    pid=rank.process.pid,
                    exit_code=code,
                    time=rank.ended,
                    log_path=str(rank.plan.log_path),
                    error=DUMPED if dumped else None,
                )
        return failure

    # -- stop ----------------------------------------------------------------------------------

    def _stop_all(self) -> int:
        """SIGTERM every rank's process group and every stray, SIGKILL what outlives the grace.

        Groups of ranks that already exited are signalled too: a rank may have left children.
        Returns how many ranks were still running.
        """
        running = [rank for rank in self._ranks if rank.process.poll() is None]
        for rank in running:
            rank.stopped = True
        strays = self._strays.find(self._rank_pids())
        began = time.time()
        # What the running processes are writing now may be left half written (a checkpoint):
        # the next attempt must not resume from it.
        writing = files_open_for_writing(
            [p.pid for rank in running for p in tree(rank.process.pid)] + [p.pid for p in strays]
        ) if running else set()  # fmt: skip
        for rank in running:  # see ascendify.savenow: the ranks may save before they end
            request_save(rank.plan.env)
        for rank in reversed(self._ranks):
            _signal_group(rank.process.pid, signal.SIGTERM)
        signal_all(strays, signal.SIGTERM)
        deadline = time.monotonic() + self.plan.grace_period
        while time.monotonic() < deadline:
            strays = still_alive(strays)
            if not strays and all(rank.process.poll() is not None for rank in running):
                break
            time.sleep(POLL_INTERVAL)
        strays = still_alive(strays)
        killed = bool(strays) or any(rank.process.poll() is None for rank in running)
        if killed:
            for rank in self._ranks:
                _signal_group(rank.process.pid, signal.SIGKILL)
            signal_all(strays, signal.SIGKILL)
        for rank in self._ranks:
            # Popen's own wait: a rank reaped by anyone else would read as exit code 0.
            code = rank.process.wait()
            if rank.exit_code is None:
                rank.exit_code, rank.ended = code, time.time()
        still_alive(strays)  # reap the killed ones that were our children
        if running:
            self._teardown = StoppedAttempt(
                self.plan.attempt, began, time.time(), signatures(writing), killed
            )
        return len(running)

    def _rank_pids(self) -> set[int]:
        return {rank.process.pid for rank in self._ranks}

    def _close(self, rank: _Rank) -> None:
        for pump in rank.pumps:
            pump.join(timeout=2.0)
        with contextlib.suppress(OSError):  # what is still buffered may not fit on a full disk
            rank.log.close()
        if rank.marks is not None:
            with contextlib.suppress(OSError):
                rank.marks.close()

    # -- signals -------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _forwarded_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield  # only the main thread may install handlers; the caller then owns signals
            return

        def note(signum: int, _frame: Any) -> None:
            self._signal = signum
            self._signals += 1

        previous = {sig: signal.signal(sig, note) for sig in (signal.SIGINT, signal.SIGTERM)}
        pending = self._pending_signal()  # one that came just before the handlers were ours
        if pending is not None:
            note(pending, None)
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    # -- result --------------------------------------------------------------------------------

    def _result(self, state: str, failure: RankFailure | None, stopped: int) -> RunResult:
        exit_codes: dict[int, int | None] = {w.rank: None for w in self.plan.workers}
        exit_codes.update({rank.plan.rank: rank.exit_code for rank in self._ranks})
        shown = False  # the console showed the failed rank's errors as they came
        if state == "failed" and failure is not None and failure.pid > 0:
            # Our own rank ran and exited: its log and error file tell why.
            worker = next(w for w in self.plan.workers if w.rank == failure.rank)
            failure = _with_details(failure, worker)
            shown = bool(self.plan.tee & 2) and self._shows(worker)
        if state == "succeeded":
            code, message = 0, f"all {len(self._ranks)} ranks finished"
        elif state == "interrupted":
            assert self._signal is not None
            code = 128 + self._signal
            message = f"stopped by {signal_name(self._signal)}; {stopped} running rank(s) stopped"
        else:
            assert failure is not None
            code = failure.launcher_exit_code
            where = (
                "" if state == "failed" else f"stopped because node {failure.node_rank} failed: "
            )
            report = failure.describe(show_lines=not shown)
            message = f"{where}{report}\nstopped {stopped} running rank(s) of this node"
        if self.peers is not None:
            # A signal that comes during the wait for the other nodes ends it: the platform wants
            # this node gone, and its own ranks have ended already.
            signals_before = self._signals
            self.peers.finish(state, lambda: self._signals > signals_before)
        stopped_ranks = frozenset(rank.plan.rank for rank in self._ranks if rank.stopped)
        result = RunResult(
            state, code, exit_codes, failure, self.plan.log_dir, message, stopped_ranks,
            self._stacks, self._teardown, self._signal,
        )  # fmt: skip
        self._write_summary(result)
        return result

    def _write_summary(self, result: RunResult) -> None:
        """A machine-readable record of the run next to the logs."""
        summary = {
            "job_id": self.plan.job_id,
            "node_rank": self.plan.node_rank,
            "state": result.state,
            "exit_code": result.exit_code,
            "exit_codes": {str(rank): code for rank, code in result.exit_codes.items()},
            "ranks": {
                str(rank): _rank_record(code, rank in result.stopped)
                for rank, code in result.exit_codes.items()
            },
            "root_cause": asdict(result.root_cause) if result.root_cause else None,
            "stacks": {str(rank): text for rank, text in result.stacks.items()},
            "logs": {str(w.rank): str(w.log_path) for w in self.plan.workers},
        }
        write_summary(self.plan.log_dir / SUMMARY_NAME, summary)


def write_summary(path: Path, summary: dict[str, Any]) -> None:
    """``run_summary.json``, into the room reserved at the start, which a full disk cannot take."""
    data = (json.dumps(summary, indent=2) + "\n").encode()
    try:
        with path.open("r+b" if path.exists() else "wb") as handle:
            handle.write(data)
            handle.truncate()
    except OSError as error:
        sys.stderr.write(f"ascendify: cannot write {path}: {error.strerror}\n")


def output_pieces(stream: IO[bytes]) -> Iterator[bytes]:
    """``stream`` cut after every line end, and before :data:`LINE_LIMIT` bytes without one.

    A lone carriage return ends a piece too: progress bars redraw their line with it and must
    show at once. The cut keeps memory bounded whatever a rank prints (a line without a newline).
    """
    pending = b""
    while chunk := stream.read1(LINE_LIMIT):  # type: ignore[attr-defined]
        pending += chunk
        start = 0
        for end in _LINE_END.finditer(pending):
            yield pending[start : end.end()]
            start = end.end()
        pending = pending[start:]
        while len(pending) >= LINE_LIMIT:
            yield pending[:LINE_LIMIT]
            pending = pending[LINE_LIMIT:]
    if pending:
        yield pending


def _open_marks(log_path: Path, attempt: int) -> IO[bytes] | None:
    try:
        return times_path(log_path).open("ab" if attempt else "wb")
    except OSError:
        return None  # the log is what matters; without marks, explain orders ranks by exit


def _mark(rank: _Rank) -> None:
    """Note when the output at the log's current end arrived (at most every MARK_INTERVAL)."""
    now = time.time()
    if rank.marks is None or now - rank.last_mark < MARK_INTERVAL:
        return
    rank.last_mark = now
    try:
        rank.marks.write(f"{rank.written} {now:.3f}\n".encode())
        rank.marks.flush()
    except OSError:
        rank.marks = None  # a full disk: the log itself still gets what fits


def _console_line(prefix: bytes, piece: bytes, previous: bytes) -> bytes:
    """A piece as the console shows it: prefixed, and ending the line a cut piece leaves open."""
    if piece == b"\n" and previous.endswith(b"\r"):
        return piece  # the second half of a "\r\n" that arrived in two reads
    return prefix + piece if piece.endswith((b"\n", b"\r")) else prefix + piece + b"\n"


def _with_details(failure: RankFailure, worker: WorkerPlan) -> RankFailure:
    lines = _tail(Path(failure.log_path), TAIL_LINES)
    error = _error_message(worker.error_file) or failure.error
    hint = hint_for((*lines, error or ""), worker.argv)
    return replace(failure, last_lines=lines, error=error, hint=hint)


def _tail(path: Path, count: int) -> tuple[str, ...]:
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 64 * 1024))
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ()
    return tuple(text.splitlines()[-count:])


def _error_message(path: Path) -> str | None:
    """The message torch's ``@record`` writes to TORCHELASTIC_ERROR_FILE, when the rank had one.

    The rank wrote the file: it is read within the limits of :mod:`ascendify.textfile` (up to
    :data:`ERROR_FILE_LIMIT` bytes, nested at most so deep; beyond them the report says so), and
    the message is cut at :data:`ERROR_MESSAGE_LIMIT` characters.
    """
    what = "the rank's error file"
    try:
        text = read_text(path, what, limit=ERROR_FILE_LIMIT)
        data = parse_json(text, f"{what} {path}", AscendifyError)
        message = data["message"]
        text = str(message["message"] if isinstance(message, dict) else message)
    except FileNotFoundError:
        return None
    except AscendifyError as unread:
        return f"({unread})"
    except (ValueError, KeyError, TypeError):
        return None
    return text if len(text) <= ERROR_MESSAGE_LIMIT else text[:ERROR_MESSAGE_LIMIT] + " [...]"


def _write_failure(path: Path, error: OSError) -> str:
    """The cause a job fails with when ``path`` could not be written."""
    if error.errno in _NO_ROOM:
        detail = f" ({error.strerror})" if error.errno == errno.EFBIG else ""
        return f"disk full: {path}{detail}"
    return f"cannot write {path}: {error.strerror}"


def signal_name(number: int) -> str:
    """``SIGKILL``; real-time signals, which have no name of their own, as ``SIGRTMIN+6``."""
    try:
        return signal.Signals(number).name
    except ValueError:
        if signal.SIGRTMIN <= number <= signal.SIGRTMAX:
            return f"SIGRTMIN+{number - signal.SIGRTMIN}"
        return f"signal {number}"


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _rank_record(code: int | None, stopped: bool) -> dict[str, Any]:
    """How one rank ended: its exit code or the signal that ended it, and who stopped it."""
    return {
        "exit_code": code if code is None or code >= 0 else None,
        "signal": signal_name(-code) if code is not None and code < 0 else None,
        "started": code is not None,
        "stopped_by_launcher": stopped,
    }
