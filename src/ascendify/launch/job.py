"""Run a job on this node: spec -> channels -> attempts (assignment -> plan -> agent)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import IO, Any

from ascendify.launch.agent import RunResult
from ascendify.launch.attempts import run_attempts
from ascendify.launch.plan import LaunchPlan, NodeAssignment, local_assignment, plan_node
from ascendify.launch.ports import free_port
from ascendify.launch.spec import LaunchSpec
from ascendify.storage import ChannelPlan, for_node, plan_channels

_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
TRAIN_URL = "train_url"  # the output channel a relative --resume-from-latest pattern looks in


class _StopWhileStaging(BaseException):  # not an Exception: a request to stop
    """A stop signal came while the inputs were staged; raised from its handler."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def run_job(
    spec: LaunchSpec, console: IO[bytes] | None = None, log: Callable[[str], None] = print
) -> RunResult:
    """Start ``spec.command`` on every rank of this node and supervise it to the end.

    Remote input channels are staged once per node before any rank starts, and outputs are
    uploaded while the job runs and at its end, also when it fails (``log`` tells how it went).
    A stop signal during the staging ends it (no partial file is left) and the job, no rank
    started; one after the ranks ended does not cut the final upload short. A job that may
    restart or resume also gets the current content of its remote outputs first: a node that
    starts afresh sees what the earlier attempts wrote.
    """
    spec, channels = with_channels(spec)
    output_dir = next((Path(c.local_dir) for c in channels.channels if c.name == TRAIN_URL), None)
    if not (channels.remote_inputs or channels.remote_outputs):
        return run_attempts(spec, console, log, output_dir)
    from ascendify.storage import JobChannels, copy_tree

    main = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.getsignal(sig) for sig in _STOP_SIGNALS} if main else {}
    try:
        _set_handlers(dict.fromkeys(previous, _stop_staging))
        with JobChannels(channels, upload_interval=spec.upload_interval, log=log):
            if spec.max_restarts or spec.resume_from_latest:
                for channel in channels.remote_outputs:
                    copy_tree(channel.url, channel.local_dir, settings=channels.settings)
            _set_handlers(previous)  # the agent notes stop signals itself from now on
            result = run_attempts(spec, console, log, output_dir)
            # The ranks have ended: a stop signal now (the platform's, or one that crossed a
            # peer's failure) must not cut the final upload short.
            _set_handlers({sig: signal.SIG_IGN for sig in previous if sig == signal.SIGTERM})
        return result
    except _StopWhileStaging as stop:
        name = signal.Signals(stop.signum).name
        return RunResult(
            "interrupted", 128 + stop.signum, {}, None, Path(spec.log_dir),
            f"stopped by {name} while the inputs were staged; no rank was started",
        )  # fmt: skip
    finally:
        _set_handlers(previous)


def _stop_staging(signum: int, _frame: FrameType | None) -> None:
    raise _StopWhileStaging(signum)


def _set_handlers(handlers: dict[signal.Signals, Any]) -> None:
    """Install ``handlers`` (empty outside the main thread, where no handler may be set)."""
    for sig, handler in handlers.items():
        signal.signal(sig, handler)


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
    if spec.multi_node:
        channels = for_node(channels, spec.node_rank)
    return rewritten, channels


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
