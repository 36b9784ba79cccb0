"""What the user asked for (``LaunchOptions``) and what it means on this node (``LaunchSpec``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ascendify.launch.launchers import NestedLauncher
from ascendify.launch.ranktable import RankTable

# Console mask, as torchrun's --tee: 1 = stdout, 2 = stderr, 3 = both (0 = log files only).
TEE_ALL = 3


@dataclass(frozen=True)
class LaunchOptions:
    """The launcher's inputs as given on the command line; ``None`` means "not given"."""

    command: tuple[str, ...]
    nproc_per_node: str | None = None  # a number or "auto"
    nnodes: int | None = None  # with min_nnodes: the most nodes (torchrun's MIN:MAX)
    min_nnodes: int | None = None  # the job goes on while at least this many nodes remain
    node_rank: int | None = None
    master_addr: str | None = None
    master_port: int | None = None
    local_addr: str | None = None
    hccn_conf: Path | None = None
    log_dir: Path | None = None
    job_id: str | None = None
    module: bool = False  # run CMD as ``python -m CMD``
    verbatim: bool = (
        False  # never prefix ``python``, even to a ``.py`` file (torchrun's --no-python)
    )
    tee: int = TEE_ALL
    local_ranks_filter: tuple[int, ...] | None = None
    grace_period: float = 10.0
    join_timeout: float = 300.0
    modelarts: bool = False  # the ``python -m ascendify.davincirun`` form
    inputs: tuple[str, ...] = ()  # extra --<name>_url input channels (data_url is always one)
    outputs: tuple[str, ...] = ()  # extra output channels (train_url is always one)
    upload_interval: float = 60.0  # seconds between output uploads while the job runs
    cwd: Path | None = None  # the ranks' working directory (default: the current one)
    max_restarts: int = 0  # restarts of the whole job after a failure (torchrun's --max-restarts)
    hang_timeout: float = 0.0  # seconds without output from any rank that make a hang (0: off)
    resume_from_latest: str | None = None  # glob of checkpoints; the newest goes as --resume=


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
    upload_interval: float = 60.0
    staging_dir: Path | None = None  # remote channels are staged below it (default: cwd)
    max_restarts: int = 0
    hang_timeout: float = 0.0
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
