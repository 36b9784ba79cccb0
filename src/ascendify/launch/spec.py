"""What the user asked for (``LaunchOptions``, declared in :mod:`ascendify.launch.options`) and
what it means on this node (``LaunchSpec``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ascendify.launch.launchers import NestedLauncher
from ascendify.launch.options import DEFAULTS, LaunchOptions
from ascendify.launch.ranktable import RankTable


@dataclass(frozen=True)
class LaunchSpec:
    """Everything this node's agent needs, resolved from options, platform and machine.

    ``origins`` says where each topology fact came from (a flag, a platform variable, a device
    count, a default); ``--dry-run`` shows it.
    """

    command: tuple[str, ...]
    nproc_per_node: int
    devices: tuple[str, ...]
    device_ips: Mapping[str, str]
    nnodes: int
    node_rank: int
    master_addr: str
    master_port: int | None  # None: a free port is chosen when the job starts
    local_addr: str
    job_id: str
    cwd: Path
    log_dir: Path
    tee: int
    local_ranks_filter: tuple[int, ...] | None
    grace_period: float
    join_timeout: float
    platform: str
    platform_reason: str
    env: Mapping[str, str]  # the environment every rank inherits
    rank_table: RankTable | None = None  # given by the platform
    rank_table_path: Path | None = None  # its file
    server_index: int = 0  # this node's server in ``rank_table``
    origins: Mapping[str, str] = field(default_factory=dict)
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    upload_interval: float = DEFAULTS.upload_interval
    staging_dir: Path | None = None  # remote channels are staged below it (default: cwd)
    max_restarts: int = DEFAULTS.max_restarts
    hang_timeout: float = DEFAULTS.hang_timeout
    resume_from_latest: str | None = None
    device_kind: str = "cpu"  # "npu", "cuda" or "cpu": the cards ``devices`` names
    launcher: NestedLauncher | None = None  # accelerate/deepspeed/torchrun on the command line
    min_nnodes: int = 0  # elastic: the fewest nodes the job goes on with (0: all nnodes)

    @property
    def least_nodes(self) -> int:
        """The fewest nodes the job runs on: ``nnodes`` unless elastic (``--nnodes MIN:MAX``)."""
        return self.min_nnodes or self.nnodes

    @property
    def multi_node(self) -> bool:
        return self.nnodes > 1


__all__ = ["LaunchOptions", "LaunchSpec"]
