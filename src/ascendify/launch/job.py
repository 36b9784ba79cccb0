"""Run a job on this node: spec -> assignment -> plan -> agent."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from typing import IO

from ascendify.launch.agent import Agent, Peers, RunResult
from ascendify.launch.plan import LaunchPlan, NodeAssignment, local_assignment, plan_node
from ascendify.launch.spec import LaunchSpec


def run_job(spec: LaunchSpec, console: IO[bytes] | None = None) -> RunResult:
    """Start ``spec.command`` on every rank of this node and supervise it to the end.

    Input/output channels wrap the job here: stage the inputs, then continue with
    ``spec = dataclasses.replace(spec, command=tuple(channels.argv))`` so that every rank gets
    the rewritten arguments; :func:`plan_node` is the one place that turns spec into plan.
    """
    with _assignment(spec) as (assignment, peers):
        plan = plan_node(spec, assignment)
        return Agent(plan, peers, console).run()


def preview(spec: LaunchSpec) -> LaunchPlan:
    """The plan ``--dry-run`` prints; nothing is started and no other node is contacted.

    For a multi-node job the global ranks assume every node runs as many ranks as this one, and
    the global rank table is left out: both are settled when the nodes meet.
    """
    if not spec.multi_node:
        return plan_node(spec, local_assignment(spec, spec.master_port or free_port()))
    assert spec.master_port is not None
    offset = spec.node_rank * spec.nproc_per_node
    assignment = NodeAssignment(
        ranks=tuple(range(offset, offset + spec.nproc_per_node)),
        world_size=spec.nnodes * spec.nproc_per_node,
        master_port=spec.master_port,
        job_id=spec.job_id,
        rank_table=spec.rank_table,
    )
    return plan_node(spec, assignment)


@contextlib.contextmanager
def _assignment(spec: LaunchSpec) -> Iterator[tuple[NodeAssignment, Peers | None]]:
    if not spec.multi_node:
        yield local_assignment(spec, spec.master_port or free_port()), None
        return
    # Only multi-node jobs need torch (its TCPStore); one node starts without importing it.
    from ascendify.launch.rendezvous import rendezvous

    with rendezvous(spec) as (assignment, peers):
        yield assignment, peers


def free_port() -> int:
    """A TCP port free on every interface right now (the master rank binds it moments later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("", 0))
        return int(probe.getsockname()[1])
