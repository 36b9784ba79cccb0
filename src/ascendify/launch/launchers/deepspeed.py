"""``deepspeed [options] SCRIPT ARGS`` (and ``python -m deepspeed.launcher.runner``) as ascendify ranks.

DeepSpeed's own parser reads the options. Each rank then gets what DeepSpeed's per-node launcher
(``deepspeed.launcher.launch``) gives it: ``python -u SCRIPT --local_rank=N ARGS`` (unless
``--no_local_rank``), MASTER_ADDR/PORT, WORLD_SIZE, RANK, LOCAL_RANK, CROSS_RANK (the node),
CROSS_SIZE (the node count), LOCAL_SIZE (ranks on the node), and every card of its node visible
(``ASCEND_RT_VISIBLE_DEVICES`` on an NPU host); no ``OMP_NUM_THREADS``, which that launcher leaves
alone. It writes its environment inline, with no function to call: the plan sets these variables
(see :mod:`ascendify.launch.plan`). Host files, ``--include``/``--exclude``, ssh/pdsh, core binding
and autotuning are not applied (ascendify's topology places the ranks): the disagreement line names
each one given.
"""

from __future__ import annotations

from ascendify.launch.launchers import (
    DEEPSPEED,
    PLACES_NODES,
    STARTS_NODES,
    NestedLauncher,
    Topology,
    disagreement,
    left_out,
    narrowing,
    parse_with,
    python_command,
)

_DEFAULT_PORT = 29500  # DeepSpeed's --master_port default: only another value was asked for
# What the rank command and the counts read; every other option is named when given.
_APPLIED = frozenset(
    {"user_script", "user_args", "module", "no_python", "no_local_rank", "num_gpus",
     "num_nodes", "node_rank", "master_addr", "master_port"}
)  # fmt: skip
_NOT_CORES = "the ranks are not pinned to cores"
_LAUNCHER_ONLY = "it sets DeepSpeed's launcher, which ascendify does not run"


def deepspeed_launcher(args: tuple[str, ...], topology: Topology) -> NestedLauncher:
    from deepspeed.launcher.runner import parse_args

    parsed = parse_with(parse_args, args, DEEPSPEED)
    defaults = parse_args([parsed.user_script])
    command = python_command(
        parsed.user_script, [], module=parsed.module, no_python=parsed.no_python
    )
    local_rank_at = None if parsed.no_local_rank else len(command)
    # DeepSpeed's defaults are -1 (every node, every card) and 29500: only given values count.
    port = parsed.master_port if parsed.master_port != _DEFAULT_PORT else None
    stated = {
        "--num_gpus": (_given(parsed.num_gpus), topology.nproc_per_node),
        "--num_nodes": (_given(parsed.num_nodes), topology.nnodes),
        "--node_rank": (_given(parsed.node_rank), topology.node_rank),
        "--master_addr": (parsed.master_addr or None, topology.master_addr),
        "--master_port": (port, topology.master_port or "a free port"),
    }
    instead = {
        "hostfile": PLACES_NODES,
        "include": narrowing(topology),
        "exclude": narrowing(topology),
        "launcher": STARTS_NODES,
        "launcher_args": STARTS_NODES,
        "no_ssh": STARTS_NODES,
        "no_ssh_check": STARTS_NODES,
        "force_multi": STARTS_NODES,
        "ssh_port": STARTS_NODES,
        "venv_script": STARTS_NODES,
        "bind_cores_to_rank": _NOT_CORES,
        "bind_core_list": _NOT_CORES,
        "enable_each_rank_log": "each rank's output is rank_<r>.log in ascendify's log dir",
        "save_pid": "no pid file is written",
        "autotuning": "the script runs as given, without DeepSpeed's autotuner",
        "log_level": _LAUNCHER_ONLY,
        "quiet": _LAUNCHER_ONLY,
    }
    left = left_out(parsed, defaults, _APPLIED, instead, lambda dest: f"--{dest}")
    return NestedLauncher(
        DEEPSPEED,
        (*command, *parsed.user_args),
        local_rank_at=local_rank_at,
        deepspeed_env=True,
        disagreement=disagreement(DEEPSPEED, stated, topology, left),
    )


def _given(value: int) -> int | None:
    return value if value >= 0 else None
