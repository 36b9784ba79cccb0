"""Which cluster engine started us, read from its environment through ONE table.

Each row names a platform, the variables whose presence recognises it, and where it keeps each
topology fact (node rank, node count, master address and port, processes per node, job id).
A source is either a variable name or a small function of the environment for facts a platform
spells indirectly (a host list, a Slurm node list, a world size counted in processes).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

Env = Mapping[str, str]
Source = str | Callable[[Env], str | None]


def _first_host(variable: str) -> Callable[[Env], str | None]:
    def first(env: Env) -> str | None:
        hosts = _split_hosts(env.get(variable, ""))
        return hosts[0] if hosts else None

    first.__name__ = f"first of {variable}"
    return first


def _host_count(variable: str) -> Callable[[Env], str | None]:
    def count(env: Env) -> str | None:
        hosts = _split_hosts(env.get(variable, ""))
        return str(len(hosts)) if hosts else None

    count.__name__ = f"count of {variable}"
    return count


def _own_host(hosts_variable: str, index_variable: str) -> Callable[[Env], str | None]:
    def own(env: Env) -> str | None:
        hosts = _split_hosts(env.get(hosts_variable, ""))
        index = env.get(index_variable, "")
        return hosts[int(index)] if index.isdigit() and int(index) < len(hosts) else None

    own.__name__ = f"{hosts_variable}[{index_variable}]"
    return own


def _split_hosts(value: str) -> list[str]:
    # Legacy ModelArts writes host:port pairs; the port is not ours to use.
    return [host.strip().split(":")[0] for host in value.split(",") if host.strip()]


def _nodes_from_world_size(env: Env) -> str | None:
    """Kubeflow and MindCluster count WORLD_SIZE in processes when they give a per-node count."""
    world = env.get("WORLD_SIZE", "")
    per_node = env.get("LOCAL_WORLD_SIZE") or env.get("PET_NPROC_PER_NODE") or ""
    if not world.isdigit():
        return None
    if per_node.isdigit() and int(per_node) > 0:
        return str(int(world) // int(per_node))
    return world  # Volcano's pytorch plugin and older Kubeflow count pods


_nodes_from_world_size.__name__ = "WORLD_SIZE / LOCAL_WORLD_SIZE"


def expand_slurm_nodelist(value: str) -> list[str]:
    """``node[01-03,7],gpu1`` -> ``["node01", "node02", "node03", "node7", "gpu1"]``."""
    hosts: list[str] = []
    for match in re.finditer(r"([^,\[]+)(?:\[([^\]]+)\])?", value):
        prefix, ranges = match.group(1), match.group(2)
        if ranges is None:
            hosts.append(prefix)
            continue
        for part in ranges.split(","):
            low, _, high = part.partition("-")
            for number in range(int(low), int(high or low) + 1):
                hosts.append(f"{prefix}{number:0{len(low)}d}")
    return hosts


def _slurm_master(env: Env) -> str | None:
    hosts = expand_slurm_nodelist(env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST", ""))
    return hosts[0] if hosts else None


_slurm_master.__name__ = "first of SLURM_JOB_NODELIST"


def _modelarts_job_id(env: Env) -> str | None:
    name = env.get("MA_VJ_NAME")
    return name.replace("ma-job", "modelarts-job", 1) if name else None


_modelarts_job_id.__name__ = "MA_VJ_NAME"


@dataclass(frozen=True)
class Platform:
    name: str
    # The platform is recognised when every variable of any one group is set.
    recognised_by: tuple[tuple[str, ...], ...]
    sources: Mapping[str, tuple[Source, ...]]


PLATFORMS: tuple[Platform, ...] = (
    Platform(
        name="modelarts",  # also plain Volcano jobs with the env and svc plugins
        recognised_by=(
            ("MA_NUM_HOSTS",),
            ("VC_TASK_INDEX",),
            ("VK_TASK_INDEX",),
            ("MA_VJ_NAME",),
            ("MA_NUM_GPUS",),
            ("MA_CURRENT_HOST_IP",),
        ),
        sources={
            "node_rank": ("VC_TASK_INDEX", "VK_TASK_INDEX"),
            "nnodes": ("MA_NUM_HOSTS", "VC_WORKER_NUM", _host_count("VC_WORKER_HOSTS")),
            "master_addr": (_first_host("VC_WORKER_HOSTS"), "MASTER_ADDR"),
            "master_port": ("MASTER_PORT",),
            "local_addr": (
                _own_host("VC_WORKER_HOSTS", "VC_TASK_INDEX"),
                _own_host("VC_WORKER_HOSTS", "VK_TASK_INDEX"),
                "MA_CURRENT_HOST_IP",
            ),
            "nproc_per_node": ("MA_NUM_GPUS",),
            "job_id": ("BATCH_JOB_ID", _modelarts_job_id),
        },
    ),
    Platform(
        name="pytorchjob",  # Kubeflow PyTorchJob, MindCluster AscendJob, Volcano's pytorch plugin
        recognised_by=(
            ("PET_NNODES",),
            ("PET_NODE_RANK",),
            ("MINDX_TASK_ID",),
            ("MASTER_ADDR", "RANK", "WORLD_SIZE"),
        ),
        sources={
            "node_rank": ("PET_NODE_RANK", "RANK"),
            "nnodes": ("PET_NNODES", _nodes_from_world_size),
            "master_addr": ("MASTER_ADDR",),
            "master_port": ("MASTER_PORT",),
            "local_addr": (),
            "nproc_per_node": ("PET_NPROC_PER_NODE", "LOCAL_WORLD_SIZE"),
            "job_id": ("MINDX_TASK_ID",),
        },
    ),
    Platform(
        name="slurm",
        recognised_by=(("SLURM_NODEID",),),
        sources={
            "node_rank": ("SLURM_NODEID",),
            "nnodes": ("SLURM_NNODES", "SLURM_JOB_NUM_NODES"),
            "master_addr": ("MASTER_ADDR", _slurm_master),
            "master_port": ("MASTER_PORT",),
            "local_addr": (),
            "nproc_per_node": ("SLURM_GPUS_ON_NODE",),
            "job_id": ("SLURM_JOB_ID",),
        },
    ),
    Platform(
        name="openmpi",  # one launcher per node: mpirun --map-by ppr:1:node ascendify run ...
        recognised_by=(("OMPI_COMM_WORLD_RANK",),),
        sources={
            "node_rank": ("OMPI_COMM_WORLD_RANK",),
            "nnodes": ("OMPI_COMM_WORLD_SIZE",),
            "master_addr": ("MASTER_ADDR",),
            "master_port": ("MASTER_PORT",),
            "local_addr": (),
            "nproc_per_node": (),
            "job_id": ("OMPI_MCA_ess_base_jobid",),
        },
    ),
)

# Outside any platform, the plain torch variables still say where the master is.
LOCAL = Platform(
    name="local",
    recognised_by=(),
    sources={"master_addr": ("MASTER_ADDR",), "master_port": ("MASTER_PORT",)},
)


@dataclass(frozen=True)
class Detected:
    """A recognised platform, why, and each fact with the variable it came from."""

    platform: str
    reason: str
    facts: Mapping[str, str]
    origins: Mapping[str, str]


def detect_platform(env: Env) -> Detected:
    """The first platform recognised that says which node this is; else the first recognised.

    A pod of a job's PyTorchJob has ModelArts' job variables (MA_NUM_HOSTS, ...) but not its
    node index, which the operator gives (RANK): that pod's node is the operator's to name.
    """
    found = []
    for platform in PLATFORMS:
        group = next((g for g in platform.recognised_by if all(env.get(n) for n in g)), None)
        if group is not None:
            found.append(_read(platform, env, f"{', '.join(group)} set"))
    placed = [detected for detected in found if "node_rank" in detected.facts]
    if found:
        return (placed or found)[0]
    return _read(LOCAL, env, "no cluster engine variables set")


def _read(platform: Platform, env: Env, reason: str) -> Detected:
    facts: dict[str, str] = {}
    origins: dict[str, str] = {}
    for fact, sources in platform.sources.items():
        for source in sources:
            value = env.get(source) if isinstance(source, str) else source(env)
            if value:
                facts[fact] = value
                origins[fact] = source if isinstance(source, str) else source.__name__
                break
    return Detected(platform=platform.name, reason=reason, facts=facts, origins=origins)
