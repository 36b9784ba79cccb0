"""``torchrun [options] SCRIPT ARGS`` (and ``python -m torch.distributed.run``) as ascendify ranks.

ascendify's ranks already get what torchrun gives its workers (RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_*, TORCHELASTIC_*), so only the rank command is read here,
with torch's own parser: ``python -u [-m] SCRIPT ARGS`` (or the command itself with
``--no-python``). The rendezvous, restarts and output options have ascendify's own counterparts
(:data:`_INSTEAD`); every other option given is named in the disagreement line too.
"""

from __future__ import annotations

import argparse

from ascendify.launch.launchers import (
    PLACES_NODES,
    TORCHRUN,
    NestedLauncher,
    Topology,
    disagreement,
    left_out,
    parse_with,
    python_command,
)

# What the rank command and the counts read; every other option is named when given.
_APPLIED = frozenset(
    {"training_script", "training_script_args", "module", "no_python", "nproc_per_node",
     "nnodes", "node_rank", "master_addr", "master_port"}
)  # fmt: skip
_INSTEAD = {
    "rdzv_backend": PLACES_NODES,
    "rdzv_endpoint": PLACES_NODES,
    "rdzv_id": PLACES_NODES,
    "rdzv_conf": PLACES_NODES,
    "standalone": PLACES_NODES,
    "local_addr": "use ascendify run --local-addr",
    "max_restarts": "use ascendify run --max-restarts",
    "monitor_interval": "ascendify's agent watches the ranks",
    "start_method": "ascendify starts each rank as a new process",
    "log_dir": "use ascendify run --log-dir",
    "tee": "use ascendify run --tee",
    "redirects": "each rank's output goes to its log and the console",
    "local_ranks_filter": "use ascendify run --local-ranks-filter",
}


def torchrun_launcher(args: tuple[str, ...], topology: Topology) -> NestedLauncher:
    from torch.distributed.run import get_args_parser

    parser = get_args_parser()
    parsed = parse_with(parser.parse_args, args, TORCHRUN)
    command = python_command(
        parsed.training_script,
        parsed.training_script_args,
        module=parsed.module,
        no_python=parsed.no_python,
    )
    stated = {
        "--nproc-per-node": (_given(parser, parsed, "nproc_per_node"), topology.nproc_per_node),
        "--nnodes": (_given(parser, parsed, "nnodes"), topology.nnodes),
        "--node-rank": (_given(parser, parsed, "node_rank"), topology.node_rank),
        "--master-addr": (_changed(parser, parsed, "master_addr"), topology.master_addr),
        "--master-port": (parsed.master_port, topology.master_port or "a free port"),
    }
    defaults = parser.parse_args([parsed.training_script])
    left = left_out(parsed, defaults, _APPLIED, _INSTEAD, _flag)
    return NestedLauncher(
        TORCHRUN, command, disagreement=disagreement(TORCHRUN, stated, topology, left)
    )


def _changed(parser: argparse.ArgumentParser, parsed: argparse.Namespace, dest: str) -> object:
    value = getattr(parsed, dest)
    return None if value == parser.get_default(dest) else value


def _flag(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def _given(parser: argparse.ArgumentParser, parsed: argparse.Namespace, dest: str) -> object:
    """A count the command line set (None for a default or a word such as ``auto``)."""
    value = getattr(parsed, dest)
    if value == parser.get_default(dest):
        return None
    if isinstance(value, str):
        low, _, high = value.partition(":")
        if not low.isdigit():
            return None
        return low if high in ("", low) else value
    return value
