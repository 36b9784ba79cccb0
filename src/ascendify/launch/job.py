"""Run a job on this node: spec -> assignment -> plan -> agent."""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import IO

from ascendify.launch.agent import Agent, Peers, RunResult
from ascendify.launch.plan import LaunchPlan, NodeAssignment, local_assignment, plan_node
from ascendify.launch.spec import LaunchSpec
from ascendify.storage import ChannelPlan, plan_channels


def run_job(
    spec: LaunchSpec, console: IO[bytes] | None = None, log: Callable[[str], None] = print
) -> RunResult:
    """Start ``spec.command`` on every rank of this node and supervise it to the end.

    Remote input channels are staged once per node before any rank starts, and outputs are
    uploaded while the job runs and at its end, also when it fails (``log`` tells how it went).
    """
    spec, channels = with_channels(spec)
    if not (channels.remote_inputs or channels.remote_outputs):
        return _supervise(spec, console)
    from ascendify.storage import JobChannels

    with contextlib.ExitStack() as held:
        with JobChannels(channels, upload_interval=spec.upload_interval, log=log):
            result = _supervise(spec, console)
            # The ranks have ended: a stop signal now (the platform's, or one that crossed a
            # peer's failure) must not cut the final upload short.
            held.enter_context(_ignoring(signal.SIGTERM))
        return result


@contextlib.contextmanager
def _ignoring(sig: signal.Signals) -> Iterator[None]:
    """``sig`` ignored until the block ends (only the main thread may change a disposition)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(sig, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(sig, previous)


def with_channels(spec: LaunchSpec) -> tuple[LaunchSpec, ChannelPlan]:
    """The spec whose command reads staged local copies of its ``--<name>_url`` channels (pure)."""
    env = dict(spec.env)
    if env.get("MA_VJ_NAME"):
        # On ModelArts itself the platform has staged MA_INPUTS/MA_OUTPUTS already.
        env.pop("MA_INPUTS", None)
        env.pop("MA_OUTPUTS", None)
    channels = plan_channels(
        spec.command,
        env,
        spec.staging_dir or spec.cwd,
        inputs=spec.inputs,
        outputs=spec.outputs,
    )
    rewritten = replace(spec, command=tuple(channels.argv), env={**spec.env, **channels.env})
    return rewritten, channels


def _supervise(spec: LaunchSpec, console: IO[bytes] | None) -> RunResult:
    with _assignment(spec) as (assignment, peers):
        plan = plan_node(spec, assignment)
        return Agent(plan, peers, console).run()


def preview(spec: LaunchSpec) -> LaunchPlan:
    """The plan ``--dry-run`` prints; nothing is started, staged or contacted.

    For a multi-node job the global ranks assume every node runs as many ranks as this one, and
    the global rank table is left out: both are settled when the nodes meet.
    """
    spec, _ = with_channels(spec)
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
