"""Multi-node rendezvous in rounds over the job's store (see :mod:`ascendify.launch.storelink`).

Each round is one membership: the nodes that met, numbered by node rank (a node keeps its
``--node-rank`` as its name whatever the others do). The store's host opens the round, waits for
the nodes it expects, numbers the ranks node by node, takes the ranks' port from the lowest node,
assembles the global v1.0 rank table and publishes the assignment. Every key of a round carries
its number, so what an earlier membership left in the store never reads as this one's.

While a round runs the store carries its first failure (first writer wins), so every node stops
when one fails; the host also watches the other nodes' beats (a node silent for
:data:`NODE_LOST_AFTER` seconds is lost) and the launchers that ask to join. Each attempt of a job
that restarts (see :mod:`ascendify.launch.attempts`) is a new round. Which nodes a round waits for:

- the first round of a job: every node, or with ``--nnodes MIN:MAX`` at least MIN of them and
  whoever else comes within :data:`LAST_CALL` seconds after;
- a later round: the nodes of the last round that are not lost, and those that asked to join;
  a node whose beat stopped is dropped while at least MIN remain, else the round waits for a
  launcher started again for it, up to ``--join-timeout``.

At the end the host keeps the store up until every node has said it is done.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, replace
from typing import Any

from ascendify.launch.agent import RankFailure
from ascendify.launch.plan import NodeAssignment, local_assignment
from ascendify.launch.ports import free_port
from ascendify.launch.ranktable import RankTable, assemble, parse_rank_table, to_json
from ascendify.launch.restart import restarts
from ascendify.launch.spec import LaunchSpec
from ascendify.launch.storelink import (
    NODE_LOST_AFTER,
    PREFIX,
    ROUND_KEY,
    STORE_ERRORS,
    RendezvousError,
    StoreLink,
    beat_key,
)

__all__ = ["NODE_LOST_AFTER", "Rendezvous", "RendezvousError", "StorePeers"]

_POLL = 0.1
# After a failure, how long the store's host keeps it up for the others to read it.
_FAILURE_LINGER = 5.0
# The first round of an elastic job: how long after MIN nodes met the others may still come.
LAST_CALL = 10.0


def _key(attempt: int, name: str) -> str:
    return f"{PREFIX}{attempt}/{name}"


def _node_key(attempt: int, node_rank: int) -> str:
    return _key(attempt, f"node/{node_rank}")


def _done_key(attempt: int, node_rank: int) -> str:
    return _key(attempt, f"done/{node_rank}")


def _stacks_key(attempt: int, node_rank: int) -> str:
    return _key(attempt, f"stacks/{node_rank}")


def _waiting_key(attempt: int, node_rank: int) -> str:
    """A launcher that came while round ``attempt`` ran asks to be taken in the next one."""
    return _key(attempt, f"waiting/{node_rank}")


class Beats:
    """The other nodes' beats as the store's host sees them: when each last moved."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[int, float]] = {}

    def look(self, store: Any, nodes: Iterable[int]) -> None:
        now = time.monotonic()
        for node in nodes:
            beat = int(store.add(beat_key(node), 0))
            seen, since = self._seen.get(node, (-1, now))
            self._seen[node] = (beat, now if seen not in (beat, -1) else since)

    def restart(self, nodes: Iterable[int]) -> None:
        """The clocks of the nodes that just met start now: a launcher started again for a lost
        node must not inherit its predecessor's silence."""
        now = time.monotonic()
        self._seen.update({node: (self._seen.get(node, (-1, now))[0], now) for node in nodes})

    def stalled(self, node: int) -> bool:
        _beat, since = self._seen.get(node, (-1, time.monotonic()))
        return time.monotonic() - since >= NODE_LOST_AFTER


class Rendezvous:
    """This node's part in the job's rounds, for every attempt of the job."""

    def __init__(self, spec: LaunchSpec) -> None:
        self.spec = spec
        self.link = StoreLink(spec)
        self.beats = Beats()
        self.lost: set[int] = set()  # nodes found lost since they last met
        self._job_id = spec.job_id  # node 0's, once the nodes met
        self._moves_seen = 0  # the store's moves this node has taken into account

    def first_attempt(self) -> int:
        """0 when the job starts; the round to join for a node that starts while it runs."""
        store, me = self.link.store, self.spec.node_rank
        if self.link.hosting or not store.check([ROUND_KEY]):
            return 0
        current = int(store.get(ROUND_KEY))
        if store.check([_key(current, "failure")]):
            return current + 1
        if store.check([_key(current, "assignment")]):
            store.set(_waiting_key(current, me), "1")  # the host takes us in the next round
            return current + 1
        return current

    def meet(
        self, attempt: int, interrupted: Callable[[], bool] = lambda: False
    ) -> tuple[NodeAssignment, StorePeers]:
        """Meet the other nodes in round ``attempt`` (a later one when this node is not taken
        in it): this node's assignment and its peers, whose ``attempt`` is the round.

        A store that goes away meanwhile is followed to its new host and the round met there.
        The waits end with a :class:`RendezvousError` once ``interrupted()`` (a stop signal).
        """
        while True:
            generation = self.link.generation
            try:
                return self._meet(attempt, interrupted)
            except STORE_ERRORS:
                self.link.recover(generation)

    def _meet(
        self, attempt: int, interrupted: Callable[[], bool]
    ) -> tuple[NodeAssignment, StorePeers]:
        store, spec = self.link.store, self.spec
        if self.link.generation != self._moves_seen and self.link.moved_from is not None:
            self.lost.add(self.link.moved_from)  # its store went with it: no need to wait
            self._moves_seen = self.link.generation
        while True:
            hosting = self.link.hosting
            if hosting:
                store.set(ROUND_KEY, str(attempt))
            _publish(store, spec, attempt)
            if hosting:
                published = self._assign(store, attempt, interrupted)
            else:
                published = _receive(store, spec, attempt, interrupted)
            members = {int(node): address for node, address in published["members"]}
            if spec.node_rank in members:
                break
            store.set(_waiting_key(attempt, spec.node_rank), "1")  # too late for this round
            attempt += 1
        self.link.remember(members, published["host"])
        self.lost -= set(members)
        self._job_id = published["job_id"]
        peers = StorePeers(store, spec, attempt, self, published)
        return _assignment(spec, published), peers

    def _assign(self, store: Any, attempt: int, interrupted: Callable[[], bool]) -> dict[str, Any]:
        """The host: wait for the round's nodes, then hand out ranks, port and rank table."""
        spec = self.spec
        assignment_key = _key(attempt, "assignment")
        try:
            joined = self._close_round(store, attempt, interrupted)
            nodes = {n: json.loads(store.get(_node_key(attempt, n))) for n in joined}
            _check_agreement(list(nodes.values()), spec)
            table = None if spec.rank_table is not None else _global_table(list(nodes.values()))
        except RendezvousError as error:
            store.set(assignment_key, json.dumps({"error": str(error)}))
            raise
        offsets, total = {}, 0
        for node in joined:
            offsets[str(node)] = total
            total += len(nodes[node]["devices"])
        before = set(self.link.members)
        lowest = nodes[joined[0]]  # its first rank is rank 0: the ranks' master
        published = {
            "round": attempt,
            "members": [[node, nodes[node]["address"]] for node in joined],
            "host": spec.node_rank,
            "offsets": offsets,
            "world_size": total,
            "master_port": lowest["port"],
            "master_addr": lowest["address"],
            "job_id": self._job_id,
            "rank_table": to_json(table) if table is not None else None,
            "time": time.time(),
            "left": sorted(before - set(joined)) if before else [],
            "joined": sorted(set(joined) - before) if before else [],
        }
        self.beats.restart(joined)
        store.set(assignment_key, json.dumps(published))
        return published

    def _close_round(self, store: Any, attempt: int, interrupted: Callable[[], bool]) -> list[int]:
        """The nodes of round ``attempt``, once those it waits for have come (see the doc)."""
        spec = self.spec
        names = range(spec.nnodes)
        others = [n for n in names if n != spec.node_rank]
        before = set(self.link.members)
        deadline = time.monotonic() + spec.join_timeout
        last_call: float | None = None
        while True:
            joined = {n for n in names if store.check([_node_key(attempt, n)])}
            self.beats.look(store, others)
            if before:
                waiting = {n for n in names if store.check([_waiting_key(attempt - 1, n)])}
                self.lost |= {n for n in before - joined if self.beats.stalled(n)}
                expected = (before | waiting) - self.lost
            else:  # the job's first meeting: every node is on its way
                expected = set(names)
                if len(joined) >= spec.least_nodes and last_call is None:
                    last_call = time.monotonic() + LAST_CALL
                if last_call is not None and time.monotonic() >= last_call:
                    expected = joined
            enough = len(joined) >= spec.least_nodes
            if (enough and expected <= joined) or len(joined) == spec.nnodes:
                return sorted(joined)
            missing = _listed(sorted((expected or set(names)) - joined))
            if interrupted():
                raise RendezvousError(f"stopped while node(s) {missing} did not join")
            if time.monotonic() >= deadline:
                if enough:
                    return sorted(joined)
                raise RendezvousError(
                    f"node(s) {missing} did not join within {spec.join_timeout:g}s "
                    f"(rendezvous on {spec.master_addr}:{spec.master_port})"
                )
            time.sleep(_POLL)


def _publish(store: Any, spec: LaunchSpec, attempt: int) -> None:
    if store.add(_key(attempt, f"joined/{spec.node_rank}"), 1) > 1:
        raise RendezvousError(f"two nodes claim node rank {spec.node_rank}")
    node = {
        "address": spec.local_addr,
        "devices": [[device, spec.device_ips.get(device)] for device in spec.devices],
        "nnodes": spec.nnodes,
        "least": spec.least_nodes,
        "job_id": spec.job_id,
        "port": free_port(),  # for the ranks' process group, should this node hold rank 0
    }
    store.set(_node_key(attempt, spec.node_rank), json.dumps(node))


def _receive(
    store: Any, spec: LaunchSpec, attempt: int, interrupted: Callable[[], bool]
) -> dict[str, Any]:
    assignment_key = _key(attempt, "assignment")
    try:
        _wait_for(store, [assignment_key], spec, "assignment", interrupted)
    except RendezvousError:
        missing = _missing(store, [_node_key(attempt, n) for n in range(spec.nnodes)])
        raise RendezvousError(
            f"node {spec.node_rank}: no rank assignment from the store's host within "
            f"{spec.join_timeout:g}s; not joined: {_names(missing) or 'none (the host stalled)'}"
        ) from None
    published: dict[str, Any] = json.loads(store.get(assignment_key))
    if "error" in published:
        raise RendezvousError(f"the nodes could not start the job: {published['error']}")
    return published


def _assignment(spec: LaunchSpec, published: dict[str, Any]) -> NodeAssignment:
    if spec.rank_table is not None:  # the platform's table numbers the ranks
        local = local_assignment(spec, published["master_port"])
        return replace(local, job_id=published["job_id"])
    members = [int(node) for node, _address in published["members"]]
    offset = published["offsets"][str(spec.node_rank)]
    table_json = published["rank_table"]
    return NodeAssignment(
        ranks=tuple(range(offset, offset + spec.nproc_per_node)),
        world_size=published["world_size"],
        master_port=published["master_port"],
        job_id=published["job_id"],
        rank_table=parse_rank_table(table_json) if table_json is not None else None,
        group_rank=members.index(spec.node_rank),
        group_world_size=len(members),
        master_addr=published["master_addr"],
    )


def _check_agreement(nodes: list[dict[str, Any]], spec: LaunchSpec) -> None:
    counts = {node["nnodes"] for node in nodes}
    if counts != {spec.nnodes}:
        raise RendezvousError(f"nodes disagree on the node count: {sorted(counts)}")
    least = {node.get("least", node["nnodes"]) for node in nodes}
    if least != {spec.least_nodes}:
        raise RendezvousError(f"nodes disagree on MIN of --nnodes MIN:MAX: {sorted(least)}")


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


def _listed(nodes: list[int]) -> str:
    return ", ".join(map(str, nodes))


class StorePeers:
    """The other nodes in one round, as seen through the store (the agent's ``Peers``)."""

    def __init__(
        self,
        store: Any,
        spec: LaunchSpec,
        attempt: int,
        rendezvous: Rendezvous,
        published: dict[str, Any],
    ) -> None:
        self._store = store
        self._spec = spec
        self.attempt = attempt
        self._rendezvous = rendezvous
        self._hosting = rendezvous.link.hosting
        self._host = int(published["host"])
        self.members = [int(node) for node, _address in published["members"]]
        self._failure_key = _key(attempt, "failure")
        self._published = 0  # pieces of output added to the job's count
        self.membership = {
            key: published[key] for key in ("round", "time", "host", "left", "joined")
        } | {"members": self.members}

    def failure(self) -> RankFailure | None:
        try:
            first = self._first_failure()
            if first is not None or not self._hosting:
                return first
            change = self._lost_node() or self._newcomer()
        except STORE_ERRORS as error:
            # The store's host is gone: the job goes on with the others (see storelink).
            why = f"lost contact with node {self._host}'s rendezvous store ({error})"
            return RankFailure.of_node(self._host, why)
        return self.record_failure(change) if change is not None else None

    def recorded_failure(self) -> RankFailure | None:
        # A store that no longer answers has been closed by its host once every node was done.
        try:
            return self._first_failure()
        except STORE_ERRORS:
            return None

    def _first_failure(self) -> RankFailure | None:
        if self._store.check([self._failure_key]):
            return _decode(self._store.get(self._failure_key))
        return None

    def _lost_node(self) -> RankFailure | None:
        """A node whose beat has not moved for :data:`NODE_LOST_AFTER` seconds (the host only)."""
        beats = self._rendezvous.beats
        running = [
            node
            for node in self.members
            if node != self._spec.node_rank
            # a node whose ranks have ended waits for the others: it may stop beating
            and not self._store.check([_done_key(self.attempt, node)])
        ]
        beats.look(self._store, running)
        for node in running:
            if beats.stalled(node):
                self._rendezvous.lost.add(node)
                why = f"node {node} lost: no sign of its launcher for {NODE_LOST_AFTER:g}s"
                return RankFailure.of_node(node, why, exit_code=137)
        return None

    def _newcomer(self) -> RankFailure | None:
        """A launcher that asks to join: a new node while restarts are left (the nodes restart
        from the last checkpoint to take it in), or one started again for a node of ours."""
        for node in range(self._spec.nnodes):
            if not self._store.check([_waiting_key(self.attempt, node)]):
                continue
            if node in self.members:
                why = f"node {node} lost: a launcher for it started again"
                self._rendezvous.lost.add(node)
                return RankFailure.of_node(node, why, exit_code=137)
            if self.attempt < self._spec.max_restarts:
                why = f"node {node} joins: the nodes restart to take it in"
                return RankFailure.of_node(node, why, exit_code=1, cause="join")
        return None

    def record_failure(self, failure: RankFailure) -> RankFailure:
        try:
            first = self._store.compare_set(self._failure_key, "", json.dumps(asdict(failure)))
        except STORE_ERRORS:
            return failure
        return _decode(first)

    def job_output(self, pieces: int) -> int:
        try:
            total = int(self._store.add(_key(self.attempt, "output"), pieces - self._published))
        except STORE_ERRORS:
            return -1
        self._published = pieces
        return total

    def ended(self, state: str) -> None:
        with contextlib.suppress(*STORE_ERRORS):
            self._store.set(_done_key(self.attempt, self._spec.node_rank), state)

    def stacks_taken(self, timeout: float) -> None:
        with contextlib.suppress(*STORE_ERRORS):
            self._store.set(_stacks_key(self.attempt, self._spec.node_rank), "taken")
        keys = [_stacks_key(self.attempt, n) for n in self.members]
        _wait_quietly(_answering(lambda: not _missing(self._store, keys)), timeout)

    def finish(self, state: str, interrupted: Callable[[], bool]) -> None:
        self.ended(state)
        keys = [_done_key(self.attempt, n) for n in self.members]
        if state == "succeeded" and self.attempt < self._spec.max_restarts:
            # A failure on a node still running would restart the job, this node with it.
            def settled() -> bool:
                failed = bool(self._store.check([self._failure_key]))
                return interrupted() or failed or not _missing(self._store, keys)

            _wait_quietly(_answering(settled), self._spec.join_timeout)
        if not self._hosting or self._restarts(state):
            return  # the store stays up for the next round
        # The store lives in this process: keep it up until every node has read what it needs.
        linger = self._spec.join_timeout if state == "succeeded" else _FAILURE_LINGER
        _wait_quietly(_answering(lambda: interrupted() or not _missing(self._store, keys)), linger)

    def _restarts(self, state: str) -> bool:
        cause = None
        with contextlib.suppress(*STORE_ERRORS):
            if state != "succeeded" and self._store.check([self._failure_key]):
                cause = _decode(self._store.get(self._failure_key)).cause
        return restarts(state, cause, self.attempt, self._spec.max_restarts)


def _answering(ready: Callable[[], bool]) -> Callable[[], bool]:
    """``ready``, which counts a store that stopped answering (its host gone) as an answer."""

    def asked() -> bool:
        try:
            return ready()
        except STORE_ERRORS:
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
