"""``deepspeed [options] SCRIPT ARGS`` (and ``python -m deepspeed.launcher.runner``) as ascendify ranks.

DeepSpeed's own parser reads the options. Each rank then gets what DeepSpeed's per-node launcher
(``deepspeed.launcher.launch``) gives it: ``python -u SCRIPT --local_rank=N ARGS`` (unless
``--no_local_rank``), MASTER_ADDR/PORT, WORLD_SIZE, RANK, LOCAL_RANK, CROSS_RANK (the node),
CROSS_SIZE (the node count), LOCAL_SIZE (ranks on the node), and every card of its node visible
(``ASCEND_RT_VISIBLE_DEVICES`` on an NPU host). That launcher writes its environment inline, with
no function to call: the plan sets these variables (see :mod:`ascendify.launch.plan`). Host files,
``--include``/``--exclude`` and ssh/pdsh do not apply: ascendify's topology places the ranks.
"""

from __future__ import annotations

from ascendify.launch.launchers import (
    DEEPSPEED,
    NestedLauncher,
    Topology,
    disagreement,
    parse_with,
    python_command,
)


def deepspeed_launcher(args: tuple[str, ...], topology: Topology) -> NestedLauncher:
    from deepspeed.launcher.runner import parse_args

    parsed = parse_with(parse_args, args, DEEPSPEED)
    command = python_command(
        parsed.user_script, [], module=parsed.module, no_python=parsed.no_python
    )
    local_rank_at = None if parsed.no_local_rank else len(command)
    # DeepSpeed's defaults are -1 (every node, every card) and 29500: only given values count.
    stated = {
        "--num_gpus": (_given(parsed.num_gpus), topology.nproc_per_node),
        "--num_nodes": (_given(parsed.num_nodes), topology.nnodes),
        "--node_rank": (_given(parsed.node_rank), topology.node_rank),
    }
    return NestedLauncher(
        DEEPSPEED,
        (*command, *parsed.user_args),
        local_rank_at=local_rank_at,
        deepspeed_env=True,
        disagreement=disagreement(DEEPSPEED, stated, topology),
    )


def _given(value: int) -> int | None:
    return value if value >= 0 else None
