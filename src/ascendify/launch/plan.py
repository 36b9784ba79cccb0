"""Spec + this node's assignment -> the plan: per-rank argv, env, cwd and log path. Pure.

The plan holds only the variables the launcher sets; every rank also inherits the spec's
environment. Ascend defaults are set only where that environment lacks them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from ascendify import runfolder
from ascendify.heartbeat import HEARTBEAT_VARIABLE
from ascendify.launch.devices import VISIBLE_DEVICES
from ascendify.launch.launchers import NestedLauncher
from ascendify.launch.options import DEFAULTS
from ascendify.launch.ranktable import RankTable, assemble, to_json
from ascendify.launch.spec import LaunchSpec
from ascendify.launch.starthook import FOLDER, STACKS_VARIABLE
from ascendify.savenow import SAVE_NOW_VARIABLE

# davincirun raises HCCL's 120 s link set-up timeout: big jobs need the time.
HCCL_CONNECT_TIMEOUT = "1800"
RANK_TABLE_NAME = "rank_table.json"


@dataclass(frozen=True)
class NodeAssignment:
    """This node's place in the job: known at once for one node, after rendezvous for many."""

    ranks: tuple[int, ...]  # global rank of each local rank
    world_size: int
    master_port: int
    job_id: str
    rank_table: RankTable | None
    # An elastic membership (see rendezvous): this node's place among the nodes that met, and
    # the node hosting the ranks' master; None: the spec's node rank, node count and master.
    group_rank: int | None = None
    group_world_size: int | None = None
    master_addr: str | None = None

    def place(self, spec: LaunchSpec) -> tuple[int, int, str]:
        """(node index, node count, master address) of this node in the job as it met."""
        return (
            spec.node_rank if self.group_rank is None else self.group_rank,
            spec.nnodes if self.group_world_size is None else self.group_world_size,
            self.master_addr or spec.master_addr,
        )


@dataclass(frozen=True)
class WorkerPlan:
    local_rank: int
    rank: int
    device_id: str
    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: Path
    log_path: Path
    error_file: Path


@dataclass(frozen=True)
class LaunchPlan:
    job_id: str
    platform: str
    platform_reason: str
    origins: Mapping[str, str]
    node_rank: int
    nnodes: int
    world_size: int
    master_addr: str
    master_port: int
    log_dir: Path
    rank_table_file: Path | None
    rank_table_to_write: Mapping[str, Any] | None  # None: the platform's file is used as is
    workers: tuple[WorkerPlan, ...]
    tee: int
    local_ranks_filter: tuple[int, ...] | None
    grace_period: float
    inherited_env: Mapping[str, str]  # what every rank inherits; not printed (it may hold secrets)
    attempt: int = 0  # 0 for the first run of the job, N for its N-th restart
    hang_timeout: float = DEFAULTS.hang_timeout  # seconds without output from any rank (0: off)
    launcher: str | None = None  # the nested launcher whose ranks these are (accelerate, ...)
    launcher_note: str = ""  # the counts it named that the topology overrode


# What the launcher sets in every rank's environment, over anything inherited: torch.distributed's
# variables (as torchrun sets them), the Ascend ones (as ModelArts' launcher sets them), the job's
# id and its rank table. A job's env naming one is refused: the launcher's value would win.
LAUNCHER_VARIABLES = (
    "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "NODE_RANK",
    "GROUP_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_ERROR_FILE",
    "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS", "ASCENDIFY_RESTART_COUNT",
    "RANK_ID", "RANK_SIZE", "DEVICE_ID", "ASCEND_DEVICE_ID", "JOB_ID", "RANK_TABLE_FILE",
    SAVE_NOW_VARIABLE,
)  # fmt: skip


def local_assignment(spec: LaunchSpec, master_port: int) -> NodeAssignment:
    """The assignment of a single-node job (or of a node ranked by a platform rank table)."""
    if spec.rank_table is not None:
        server = spec.rank_table.servers[spec.server_index]
        ranks = tuple(int(device.rank_id) for device in server.devices)
        return NodeAssignment(
            ranks, spec.rank_table.rank_size, master_port, spec.job_id, spec.rank_table
        )
    table = None
    if spec.device_ips:
        table = assemble([(spec.local_addr, [(d, spec.device_ips[d]) for d in spec.devices])])
    ranks = tuple(range(spec.nproc_per_node))
    return NodeAssignment(ranks, spec.nproc_per_node, master_port, spec.job_id, table)


def plan_node(
    spec: LaunchSpec, assignment: NodeAssignment, attempt: int = 0, resume: Path | None = None
) -> LaunchPlan:
    """The plan of attempt ``attempt``; ``resume`` is the checkpoint passed as ``--resume=``."""
    table_file, table_json = _rank_table_file(spec, assignment.rank_table)
    group_rank, group_size, master_addr = assignment.place(spec)
    argv = spec.command if resume is None else (*spec.command, f"--resume={resume}")
    # The ranks see the job as it met: node index and count, master (the node rank is a name).
    placed = replace(
        spec, command=argv, node_rank=group_rank, nnodes=group_size, master_addr=master_addr
    )
    workers = tuple(
        _worker(placed, assignment, local_rank, table_file, attempt)
        for local_rank in range(spec.nproc_per_node)
    )
    return LaunchPlan(
        job_id=assignment.job_id,
        platform=spec.platform,
        platform_reason=spec.platform_reason,
        origins=spec.origins,
        node_rank=spec.node_rank,
        nnodes=group_size,
        world_size=assignment.world_size,
        master_addr=master_addr,
        master_port=assignment.master_port,
        log_dir=spec.log_dir,
        rank_table_file=table_file,
        rank_table_to_write=table_json,
        workers=workers,
        tee=spec.tee,
        local_ranks_filter=spec.local_ranks_filter,
        grace_period=spec.grace_period,
        inherited_env=spec.env,
        attempt=attempt,
        hang_timeout=spec.hang_timeout,
        launcher=spec.launcher.name if spec.launcher else None,
        launcher_note=spec.launcher.disagreement if spec.launcher else "",
    )


def _rank_table_file(
    spec: LaunchSpec, table: RankTable | None
) -> tuple[Path | None, dict[str, Any] | None]:
    if table is None:
        return None, None
    if table is spec.rank_table and spec.rank_table_path and table.source_version != "0":
        return spec.rank_table_path, None
    return spec.log_dir / RANK_TABLE_NAME, to_json(table)


def _worker(
    spec: LaunchSpec,
    assignment: NodeAssignment,
    local_rank: int,
    table_file: Path | None,
    attempt: int,
) -> WorkerPlan:
    rank = assignment.ranks[local_rank]
    log_path = runfolder.rank_log(spec.log_dir, rank)
    error_file = runfolder.error_file(spec.log_dir, rank)
    env = {
        # torch.distributed (what torchrun sets)
        "RANK": str(rank),
        "LOCAL_RANK": str(local_rank),
        "WORLD_SIZE": str(assignment.world_size),
        "LOCAL_WORLD_SIZE": str(spec.nproc_per_node),
        "GROUP_RANK": str(spec.node_rank),
        "NODE_RANK": str(spec.node_rank),
        "GROUP_WORLD_SIZE": str(spec.nnodes),
        "MASTER_ADDR": spec.master_addr,
        "MASTER_PORT": str(assignment.master_port),
        "TORCHELASTIC_ERROR_FILE": str(error_file),
        "TORCHELASTIC_RESTART_COUNT": str(attempt),
        "TORCHELASTIC_MAX_RESTARTS": str(spec.max_restarts),
        "ASCENDIFY_RESTART_COUNT": str(attempt),
        # Ascend (what ModelArts' launcher sets): DEVICE_ID is the logical index on this node.
        "RANK_ID": str(rank),
        "RANK_SIZE": str(assignment.world_size),
        "DEVICE_ID": str(local_rank),
        "ASCEND_DEVICE_ID": str(local_rank),
        "JOB_ID": assignment.job_id,
    }
    if table_file is not None:
        env["RANK_TABLE_FILE"] = str(table_file)
    # Created just before the launcher stops the rank (SIGTERM): save now (see ascendify.savenow).
    env[SAVE_NOW_VARIABLE] = str(spec.log_dir / "save_now" / f"attempt_{attempt}" / f"rank_{rank}")
    defaults = {
        "HCCL_CONNECT_TIMEOUT": HCCL_CONNECT_TIMEOUT,
        "ASCEND_PROCESS_LOG_PATH": str(runfolder.ascend_log_dir(spec.log_dir, rank)),
    }
    deepspeed = spec.launcher is not None and spec.launcher.deepspeed_env
    if spec.nproc_per_node > 1 and not deepspeed:  # DeepSpeed's own launcher sets none
        defaults["OMP_NUM_THREADS"] = "1"  # as torchrun: N ranks x all cores oversubscribes the CPU
    argv = spec.command
    if spec.launcher is not None:
        argv, launcher_env = _nested(spec, spec.launcher, local_rank)
        env = {**launcher_env, **env}
    env.update(
        {
            name: value
            for name, value in defaults.items()
            if name not in spec.env and name not in env
        }
    )
    # The start hook: save now through Trainer's and accelerate's own save paths, and with a
    # hang timeout faulthandler armed, so a hang's stacks can be taken (see hang.py).
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(FOLDER), spec.env.get("PYTHONPATH")]))
    if spec.hang_timeout > 0:
        env[STACKS_VARIABLE] = str(stacks_dir(spec.log_dir, attempt))
        # A file the rank touches to say it is alive without printing (ascendify.heartbeat()).
        env[HEARTBEAT_VARIABLE] = str(
            heartbeats_dir(spec.log_dir, attempt) / runfolder.rank_name(rank)
        )
    return WorkerPlan(
        local_rank=local_rank,
        rank=rank,
        device_id=spec.devices[local_rank],
        argv=argv,
        env=env,
        cwd=spec.cwd,
        log_path=log_path,
        error_file=error_file,
    )


def _nested(
    spec: LaunchSpec, launcher: NestedLauncher, local_rank: int
) -> tuple[tuple[str, ...], dict[str, str]]:
    """A rank's argv and the variables its nested launcher adds (ascendify's rank variables,
    torch's and Ascend's, are the same for every launcher and set by :func:`_worker`)."""
    argv, env = spec.command, dict(launcher.env)
    if launcher.local_rank_at is not None:
        at = launcher.local_rank_at
        argv = (*argv[:at], f"--local_rank={local_rank}", *argv[at:])
    if launcher.deepspeed_env:
        # DeepSpeed's per-node launcher: the node, the node count, the ranks on the node, and
        # every card of the node visible to each rank (which picks its own by LOCAL_RANK).
        env["CROSS_RANK"] = str(spec.node_rank)
        env["CROSS_SIZE"] = str(spec.nnodes)
        env["LOCAL_SIZE"] = str(spec.nproc_per_node)
        if spec.device_kind in VISIBLE_DEVICES:
            env[VISIBLE_DEVICES[spec.device_kind]] = ",".join(spec.devices)
    return argv, env


def stacks_dir(log_dir: Path, attempt: int) -> Path:
    """Where the ranks of an attempt write their stacks when asked (see hang.py)."""
    return log_dir / "stacks" / f"attempt_{attempt}"


def heartbeats_dir(log_dir: Path, attempt: int) -> Path:
    """Where the ranks of an attempt touch their heartbeat files (see ascendify.heartbeat)."""
    return log_dir / "heartbeats" / f"attempt_{attempt}"


def plan_to_json(plan: LaunchPlan) -> dict[str, Any]:
    """The plan as ``--dry-run`` prints it."""
    data = asdict(plan)
    del data["inherited_env"]
    data["workers"] = [
        {**asdict(worker), "argv": list(worker.argv), "env": dict(worker.env)}
        for worker in plan.workers
    ]
    data["origins"] = dict(plan.origins)
    data["platform"] = {"name": plan.platform, "reason": plan.platform_reason}
    del data["platform_reason"]
    printable: dict[str, Any] = _strings_for_paths(data)
    return printable


def _strings_for_paths(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {key: _strings_for_paths(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_strings_for_paths(item) for item in value]
    return value
