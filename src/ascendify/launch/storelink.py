"""An agent's link to the job's rendezvous store: a torch.distributed ``TCPStore`` that outlives
the node hosting it.

Node 0's agent hosts the store when the job starts. Every other agent beats in it (a counter per
node, from a thread of its own, so a node tearing its ranks down still beats). When the store
stops answering, its host is gone: the surviving nodes of the last membership take the lowest
among themselves (by node rank) as the new host, which serves a fresh, empty store on its own
address and the same port; the others connect to it, trying the next node after
:data:`NODE_LOST_AFTER` seconds without an answer. Nothing of the old store is needed: each
membership meets under keys of its own round, and the survivors know the last membership.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

from ascendify.errors import AscendifyError
from ascendify.launch.spec import LaunchSpec

PREFIX = "ascendify/"
ROUND_KEY = PREFIX + "round"  # the round the store's host opened last
NODE_LOST_AFTER = 5.0  # seconds without a beat (or an answer from a new host) that lose a node
BEAT_INTERVAL = 0.5
POLL = 0.1
_CONNECT_GRACE = 1.0  # seconds beyond the deadline for a store that is there to answer
# How long node 0 started afresh looks for a store that moved to another node before it says
# that its port is taken.
_MOVED_STORE_WAIT = 5.0
STORE_ERRORS = (RuntimeError, OSError)  # what a store that went away raises
# The longest call the beat thread makes: a move's wait for the next host, then its connection.
_CLOSE_WAIT = 2 * NODE_LOST_AFTER + _CONNECT_GRACE


class RendezvousError(AscendifyError):
    """The nodes of a job could not meet; the message names who is missing."""


def beat_key(node: int) -> str:
    return f"{PREFIX}beat/{node}"


class StoreLink:
    """This node's connection to the store, wherever it lives now (see the module's doc)."""

    def __init__(self, spec: LaunchSpec) -> None:
        self.spec = spec
        self.port = spec.master_port or 0
        self.store, self.hosting = _first_connection(spec)
        self.host = 0  # node rank of the store's host
        self.members: Mapping[int, str] = {}  # the last membership: node rank -> address
        self.moved_from: int | None = None  # the host whose loss moved the store here last
        self.generation = 0  # how many times the store moved
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._beats = threading.Thread(target=self._beat, name="ascendify-beat", daemon=True)
        self._beats.start()

    def remember(self, members: Mapping[int, str], host: int) -> None:
        """The membership that met last, and who hosts the store: where to go if it is lost."""
        self.members, self.host = dict(members), host

    def recover(self, generation: int) -> None:
        """After an error of the store of ``generation``: move to the store's new host (or become
        it). Raises :class:`RendezvousError` when no surviving node serves it."""
        with self._lock:
            if self.generation != generation:
                return  # another thread of this agent moved already
            lost = self.host
            for node in sorted(n for n in self.members if n != lost):
                if self._take(node):
                    self.moved_from, self.host = lost, node
                    self.generation += 1
                    return
            raise RendezvousError(
                f"node {self.spec.node_rank}: the rendezvous store on node {lost} is gone and no "
                "surviving node serves it"
            )

    def close(self) -> None:
        """Stop beating, and wait for a call to the store in flight to end: a thread left inside
        the store's C++ client while the interpreter exits aborts the launcher (SIGABRT) after
        every rank succeeded, as node 0 closing the store at the job's end makes the last beat
        fail."""
        self._stopped.set()
        self._beats.join(timeout=_CLOSE_WAIT)

    def _take(self, node: int) -> bool:
        """Serve the store (``node`` is this one) or connect to ``node``'s; False: it is gone."""
        if node == self.spec.node_rank:
            try:
                self.store = _tcp_store(self.spec, self.spec.local_addr, self.port, host=True)
            except STORE_ERRORS:
                return False
            self.hosting = True
            return True
        address = self.members[node]
        try:
            _wait_for_listener(address, self.port, NODE_LOST_AFTER)
            self.store = _within(
                lambda: _tcp_store(self.spec, address, self.port, host=False),
                time.monotonic() + NODE_LOST_AFTER,
            )
        except (*STORE_ERRORS, TimeoutError):
            return False
        self.hosting = False
        return True

    def _beat(self) -> None:
        """Beat while the agent lives (the host does not: its loss is the store's loss); a beat
        that fails moves the store at once, before the main thread has torn its ranks down."""
        client: Any = None
        generation = -1
        while not self._stopped.wait(BEAT_INTERVAL):
            if self.hosting:
                client, generation = None, self.generation
                continue
            try:
                if client is None or generation != self.generation:
                    generation = self.generation
                    client = self._client()
                client.add(beat_key(self.spec.node_rank), 1)
            except (*STORE_ERRORS, TimeoutError):
                client = None
                if self._stopped.is_set():
                    return  # the job ended: its store went with node 0, nothing moves
                try:
                    self.recover(generation)
                except RendezvousError:
                    return  # the main thread finds the store gone and ends the job

    def _client(self) -> Any:
        address = self.members.get(self.host, self.spec.master_addr)
        return _within(
            lambda: _tcp_store(self.spec, address, self.port, host=False),
            time.monotonic() + NODE_LOST_AFTER,
        )


def _tcp_store(spec: LaunchSpec, address: str, port: int, *, host: bool) -> Any:
    # c10d logs every connection retry at warning level; our own messages say what matters.
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
    import torch.distributed as dist

    return dist.TCPStore(  # type: ignore[attr-defined]
        address,
        port,
        is_master=host,
        timeout=timedelta(seconds=spec.join_timeout),
        wait_for_workers=False,
    )


def _first_connection(spec: LaunchSpec) -> tuple[Any, bool]:
    """The store when this agent starts: node 0 serves it, unless it finds one already there
    (it was lost and started again while the job ran on); the others connect to node 0."""
    port = spec.master_port
    assert port is not None
    where = f"{spec.master_addr}:{port}"
    if spec.node_rank == 0:
        try:
            return _tcp_store(spec, spec.master_addr, port, host=True), True
        except STORE_ERRORS as error:
            moved = _moved_store(spec)
            if moved is None:
                raise RendezvousError(
                    f"node 0 cannot serve the rendezvous on {where}: {error}"
                ) from None
            return moved, False
    deadline = time.monotonic() + spec.join_timeout
    try:
        _wait_for_listener(spec.master_addr, port, spec.join_timeout)
        client = lambda: _tcp_store(spec, spec.master_addr, port, host=False)  # noqa: E731
        return _within(client, deadline), False
    except _NoAnswer:
        raise RendezvousError(
            f"node {spec.node_rank}: {where} accepts connections but gave no rendezvous answer "
            f"within {spec.join_timeout:g}s: is --master-port node 0's rendezvous port (another "
            "program may hold it)?"
        ) from None
    except STORE_ERRORS:
        raise RendezvousError(
            f"node {spec.node_rank} could not reach node 0 at {where} within "
            f"{spec.join_timeout:g}s: is node 0 started, and is --master-addr right?"
        ) from None


def _moved_store(spec: LaunchSpec) -> Any | None:
    """The job's store served on node 0's port by another node (node 0 was lost), or None."""
    assert spec.master_port is not None
    try:
        store = _within(
            lambda: _tcp_store(spec, spec.master_addr, spec.master_port or 0, host=False),
            time.monotonic() + _MOVED_STORE_WAIT,
        )
        return store if store.check([ROUND_KEY]) else None
    except (*STORE_ERRORS, TimeoutError):
        return None


class _NoAnswer(TimeoutError):
    """Something listens on the rendezvous port but does not answer as a TCPStore."""


def _within(connect: Callable[[], Any], deadline: float) -> Any:
    """``connect()``, given until ``deadline`` (monotonic), else :class:`_NoAnswer`.

    TCPStore's client waits without end for an answer from a listener that is not a TCPStore (the
    port belongs to something else), whatever its timeout says. The call runs in a daemon thread
    that is left behind on timeout: the launcher then ends with an error, and it with it.
    """
    outcome: list[Any] = []
    done = threading.Event()

    def attempt() -> None:
        try:
            outcome.append(connect())
        except BaseException as error:  # handed to the waiting thread
            outcome.append(error)
        done.set()

    threading.Thread(target=attempt, name="ascendify-rendezvous", daemon=True).start()
    if not done.wait(max(0.0, deadline - time.monotonic()) + _CONNECT_GRACE):
        raise _NoAnswer("no answer from the rendezvous port")
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def _wait_for_listener(host: str, port: int, timeout: float) -> None:
    """Poll until the host listens: TCPStore's own retries back off by seconds at a time."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((host, port), timeout=1.0).close()
            return
        except OSError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(POLL)
