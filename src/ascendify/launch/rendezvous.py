"""Multi-node rendezvous over torch.distributed's TCPStore, hosted by node 0's agent.

Every agent publishes its address and devices (ids and device IPs); node 0 waits for all of
them, numbers the ranks node by node, picks the port the ranks' own process group will use,
assembles the global v1.0 rank table, and publishes the assignment. While the job runs the
store carries the first failure (first writer wins), so every node stops when one fails; at
the end node 0 keeps the store up until every node has said it is done.

The store lives as long as node 0's launcher; each attempt of a job that restarts (see
:mod:`ascendify.launch.attempts`) meets under keys of its own number, so a restart rebuilds the
assignment, the ranks' port and the rank table. Node 0 publishes the number of the attempt it
runs: a node whose launcher starts afresh while the job runs joins the next one. While an attempt
runs every node beats; node 0 declares a node whose beat stops for :data:`NODE_LOST_AFTER`
seconds lost.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from datetime import timedelta
from typing import Any

from ascendify.errors import AscendifyError
from ascendify.launch.agent import RankFailure
from ascendify.launch.plan import NodeAssignment, local_assignment
from ascendify.launch.ports import free_port
from ascendify.launch.ranktable import RankTable, assemble, parse_rank_table, to_json
from ascendify.launch.restart import restarts
from ascendify.launch.spec import LaunchSpec

_PREFIX = "ascendify/"
_CURRENT_ATTEMPT = _PREFIX + "attempt"
_POLL = 0.1
# After a failure, how long node 0 keeps the store up for the others to read it.
_FAILURE_LINGER = 5.0
NODE_LOST_AFTER = 10.0
_CONNECT_GRACE = 1.0  # seconds beyond --join-timeout for a store that is there to answer


class RendezvousError(AscendifyError):
    """The nodes of a job could not meet; the message names who is missing."""


def _key(attempt: int, name: str) -> str:
    return f"{_PREFIX}{attempt}/{name}"


def _node_key(attempt: int, node_rank: int) -> str:
    return _key(attempt, f"node/{node_rank}")


def _done_key(attempt: int, node_rank: int) -> str:
    return _key(attempt, f"done/{node_rank}")


def _stacks_key(attempt: int, node_rank: int) -> str:
    return _key(attempt, f"stacks/{node_rank}")


def _beat_key(attempt: int, node_rank: int) -> str:
    return _key(attempt, f"beat/{node_rank}")


class Rendezvous:
    """This node's link to the job's store, for every attempt of the job."""

    def __init__(self, spec: LaunchSpec) -> None:
        self.spec = spec
        self.store = _connect(spec)

    def first_attempt(self) -> int:
        """0 when the job starts; the attempt to join for a node that starts while it runs."""
        if self.spec.node_rank == 0 or not self.store.check([_CURRENT_ATTEMPT]):
            return 0
        current = int(self.store.get(_CURRENT_ATTEMPT))
        return current + 1 if self.store.check([_key(current, "failure")]) else current

    def meet(
        self, attempt: int, interrupted: Callable[[], bool] = lambda: False
    ) -> tuple[NodeAssignment, StorePeers]:
        """Meet the other nodes for ``attempt``: this node's assignment and its peers.

        The waits end with a :class:`RendezvousError` once ``interrupted()`` (a stop signal).
        """
        store, spec = self.store, self.spec
        if spec.node_rank == 0:
            store.set(_CURRENT_ATTEMPT, str(attempt))
        _publish(store, spec, attempt)
        if spec.node_rank == 0:
            assignment = _assign(store, spec, attempt, interrupted)
        else:
            assignment = _receive(store, spec, attempt, interrupted)
        return assignment, StorePeers(store, spec, attempt)


def _connect(spec: LaunchSpec) -> Any:
    # c10d logs every connection retry at warning level; our own messages say what matters.
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
    import torch.distributed as dist

    port = spec.master_port
    assert port is not None
    where = f"{spec.master_addr}:{port}"
    deadline = time.monotonic() + spec.join_timeout
    try:
        if spec.node_rank != 0:
            _wait_for_listener(spec.master_addr, port, spec.join_timeout)
        return _within(
            lambda: dist.TCPStore(  # type: ignore[attr-defined]
                spec.master_addr,
                port,
                is_master=spec.node_rank == 0,
                timeout=timedelta(seconds=spec.join_timeout),
                wait_for_workers=False,
            ),
            deadline,
        )
    except _NoAnswer:
        raise RendezvousError(
            f"node {spec.node_rank}: {where} accepts connections but gave no rendezvous answer "
            f"within {spec.join_timeout:g}s: is --master-port node 0's rendezvous port (another "
            "program may hold it)?"
        ) from None
    except (RuntimeError, OSError) as error:
        if spec.node_rank == 0:
            raise RendezvousError(
                f"node 0 cannot serve the rendezvous on {where}: {error}"
            ) from None
        raise RendezvousError(
            f"node {spec.node_rank} could not reach node 0 at {where} within "
            f"{spec.join_timeout:g}s: is node 0 started, and is --master-addr right?"
        ) from None


class _NoAnswer(TimeoutError):
    """Something listens on the rendezvous port but does not answer as a TCPStore."""


def _within(connect: Callable[[], Any], deadline: float) -> Any:
    """``connect()``, given until ``deadline`` (monotonic), else :class:`TimeoutError`.

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
    """Poll until node 0 listens: TCPStore's own retries back off by seconds at a time."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((host, port), timeout=1.0).close()
            return
        except OSError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(_POLL)


def _publish(store: Any, spec: LaunchSpec, attempt: int) -> None:
    if store.add(_key(attempt, f"joined/{spec.node_rank}"), 1) > 1:
        raise RendezvousError(f"two nodes claim node rank {spec.node_rank}")
    node = {
        "address": spec.local_addr,
        "devices": [[device, spec.device_ips.get(device)] for device in spec.devices],
        "nnodes": spec.nnodes,
        "job_id": spec.job_id,
    }
    store.set(_node_key(attempt, spec.node_rank), json.dumps(node))


def _assign(
    store: Any, spec: LaunchSpec, attempt: int, interrupted: Callable[[], bool]
) -> NodeAssignment:
    """Node 0: wait for every node, then hand out ranks, the ranks' port and the rank table."""
    assignment_key = _key(attempt, "assignment")
    try:
        keys = [_node_key(attempt, n) for n in range(spec.nnodes)]
        _wait_for(store, keys, spec, "join", interrupted)
        nodes = [json.loads(store.get(key)) for key in keys]
        _check_agreement(nodes, spec)
        table = None if spec.rank_table is not None else _global_table(nodes)
    except RendezvousError as error:
        store.set(assignment_key, json.dumps({"error": str(error)}))
        raise
    offsets = [0]
    for node in nodes[:-1]:
        offsets.append(offsets[-1] + len(node["devices"]))
    published = {
        "offsets": offsets,
        "world_size": offsets[-1] + len(nodes[-1]["devices"]),
        "master_port": free_port(),
        "job_id": spec.job_id,
        "rank_table": to_json(table) if table is not None else None,
    }
    store.set(assignment_key, json.dumps(published))
    return _assignment(spec, published)


def _receive(
    store: Any, spec: LaunchSpec, attempt: int, interrupted: Callable[[], bool]
) -> NodeAssignment:
    assignment_key = _key(attempt, "assignment")
    try:
        _wait_for(store, [assignment_key], spec, "assignment", interrupted)
    except RendezvousError:
        missing = _missing(store, [_node_key(attempt, n) for n in range(spec.nnodes)])
        raise RendezvousError(
            f"node {spec.node_rank}: no rank assignment from node 0 within {spec.join_timeout:g}s; "
            f"not joined: {_names(missing) or 'none (node 0 stalled)'}"
        ) from None
    published = json.loads(store.get(assignment_key))
    if "error" in published:
        raise RendezvousError(f"node 0 could not start the job: {published['error']}")
    return _assignment(spec, published)


def _assignment(spec: LaunchSpec, published: dict[str, Any]) -> NodeAssignment:
    if spec.rank_table is not None:  # the platform's table numbers the ranks
        local = local_assignment(spec, published["master_port"])
        return replace(local, job_id=published["job_id"])
    offset = published["offsets"][spec.node_rank]
    table_json = published["rank_table"]
    return NodeAssignment(
        ranks=tuple(range(offset, offset + spec.nproc_per_node)),
        world_size=published["world_size"],
        master_port=published["master_port"],
        job_id=published["job_id"],
        rank_table=parse_rank_table(table_json) if table_json is not None else None,
    )


def _check_agreement(nodes: list[dict[str, Any]], spec: LaunchSpec) -> None:
    counts = {node["nnodes"] for node in nodes}
    if counts != {spec.nnodes}:
        raise RendezvousError(f"nodes disagree on the node count: {sorted(counts)}")


def _global_table(nodes: list[dict[str, Any]]) -> RankTable | None:
    """Servers in node-rank order; only when every device of every node has a device IP."""
    if not all(ip for node in nodes for _device, ip in node["devices"]):
        return None
    addresses = [node["address"] for node in nodes]
    duplicates = sorted({a for a in addresses if addresses.count(a) > 1})
    if duplicates:
        raise RendezvousError(
            f"nodes share an address ({', '.join(duplicates)}): give each its own --local-addr"
        )
    return assemble([(node["address"], [tuple(d) for d in node["devices"]]) for node in nodes])


def _wait_for(
    store: Any, keys: list[str], spec: LaunchSpec, what: str, interrupted: Callable[[], bool]
) -> None:
    deadline = time.monotonic() + spec.join_timeout
    while True:
        missing = _missing(store, keys)
        if not missing:
            return
        if interrupted():
            raise RendezvousError(f"stopped while node(s) {_names(missing)} did not {what}")
        if time.monotonic() >= deadline:
            raise RendezvousError(
                f"node(s) {_names(missing)} did not {what} within {spec.join_timeout:g}s "
                f"(rendezvous on {spec.master_addr}:{spec.master_port})"
            )
        time.sleep(_POLL)


def _missing(store: Any, keys: list[str]) -> list[str]:
    return [key for key in keys if not store.check([key])]


def _names(keys: list[str]) -> str:
    return ", ".join(key.rsplit("/", 1)[-1] for key in keys)


class StorePeers:
    """The other nodes in one attempt, as seen through the store (the agent's ``Peers``)."""

    def __init__(self, store: Any, spec: LaunchSpec, attempt: int = 0) -> None:
        self._store = store
        self._spec = spec
        self._attempt = attempt
        self._failure_key = _key(attempt, "failure")
        self._beats: dict[int, tuple[int, float]] = {}  # node 0: last beat seen, and when
        self._published = 0  # pieces of output added to the job's count

    def failure(self) -> RankFailure | None:
        try:
            first = self._first_failure()
            if first is not None:
                return first
            self._store.add(_beat_key(self._attempt, self._spec.node_rank), 1)
            lost = self._lost_node() if self._spec.node_rank == 0 else None
        except (RuntimeError, OSError) as error:
            # Node 0 hosts the store: losing it means node 0 is gone, and the job with it.
            return RankFailure.of_node(0, f"lost contact with node 0's rendezvous store ({error})")
        if lost is None:
            return None
        why = f"node {lost} lost: no sign of its launcher for {NODE_LOST_AFTER:g}s"
        return self.record_failure(RankFailure.of_node(lost, why, exit_code=137))

    def recorded_failure(self) -> RankFailure | None:
        # A store that no longer answers has been closed by node 0 once every node was done.
        try:
            return self._first_failure()
        except (RuntimeError, OSError):
            return None

    def _first_failure(self) -> RankFailure | None:
        if self._store.check([self._failure_key]):
            return _decode(self._store.get(self._failure_key))
        return None

    def _lost_node(self) -> int | None:
        """A node whose beat has not moved for :data:`NODE_LOST_AFTER` seconds (node 0 only)."""
        now = time.monotonic()
        for node in range(1, self._spec.nnodes):
            if self._store.check([_done_key(self._attempt, node)]):
                continue  # its ranks have ended: it waits for the others, without a beat
            beat = self._store.add(_beat_key(self._attempt, node), 0)
            seen, since = self._beats.get(node, (-1, now))
            if beat != seen:
                self._beats[node] = (beat, now)
            elif now - since >= NODE_LOST_AFTER:
                return node
        return None

    def record_failure(self, failure: RankFailure) -> RankFailure:
        try:
            first = self._store.compare_set(self._failure_key, "", json.dumps(asdict(failure)))
        except (RuntimeError, OSError):
            return failure
        return _decode(first)

    def job_output(self, pieces: int) -> int:
        try:
            total = int(self._store.add(_key(self._attempt, "output"), pieces - self._published))
        except (RuntimeError, OSError):
            return -1
        self._published = pieces
        return total

    def ended(self, state: str) -> None:
        with contextlib.suppress(RuntimeError, OSError):
            self._store.set(_done_key(self._attempt, self._spec.node_rank), state)

    def stacks_taken(self, timeout: float) -> None:
        with contextlib.suppress(RuntimeError, OSError):
            self._store.set(_stacks_key(self._attempt, self._spec.node_rank), "taken")
        keys = [_stacks_key(self._attempt, n) for n in range(self._spec.nnodes)]
        _wait_quietly(_answering(lambda: not _missing(self._store, keys)), timeout)

    def finish(self, state: str, interrupted: Callable[[], bool]) -> None:
        self.ended(state)
        keys = [_done_key(self._attempt, n) for n in range(self._spec.nnodes)]
        if state == "succeeded" and self._attempt < self._spec.max_restarts:
            # A failure on a node still running would restart the job, this node with it.
            def settled() -> bool:
                failed = bool(self._store.check([self._failure_key]))
                return interrupted() or failed or not _missing(self._store, keys)

            _wait_quietly(_answering(settled), self._spec.join_timeout)
        if self._spec.node_rank != 0 or self._restarts(state):
            return  # the store stays up for the next attempt
        # The store lives in this process: keep it up until every node has read what it needs.
        linger = self._spec.join_timeout if state == "succeeded" else _FAILURE_LINGER
        _wait_quietly(lambda: interrupted() or not _missing(self._store, keys), linger)

    def _restarts(self, state: str) -> bool:
        cause = None
        with contextlib.suppress(RuntimeError, OSError):
            if state != "succeeded" and self._store.check([self._failure_key]):
                cause = _decode(self._store.get(self._failure_key)).cause
        return restarts(state, cause, self._attempt, self._spec.max_restarts)


def _answering(ready: Callable[[], bool]) -> Callable[[], bool]:
    """``ready``, which counts a store that stopped answering (node 0 gone) as an answer."""

    def asked() -> bool:
        try:
            return ready()
        except (RuntimeError, OSError):
            return True

    return asked


def _wait_quietly(ready: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not ready() and time.monotonic() < deadline:
        time.sleep(_POLL)


def _decode(raw: bytes) -> RankFailure:
    data = json.loads(raw)
    data["last_lines"] = tuple(data.get("last_lines", ()))
    return RankFailure(**data)
