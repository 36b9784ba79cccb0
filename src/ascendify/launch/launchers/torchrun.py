"""``torchrun [options] SCRIPT ARGS`` (and ``python -m torch.distributed.run``) as ascendify ranks.

ascendify's ranks already get what torchrun gives its workers (RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_*, TORCHELASTIC_*), so only the rank command is read here,
with torch's own parser: ``python -u [-m] SCRIPT ARGS`` (or the command itself with
``--no-python``).
"""

from __future__ import annotations

import argparse

from ascendify.launch.launchers import (
    TORCHRUN,
    NestedLauncher,
    Topology,
    disagreement,
    parse_with,
    python_command,
)


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
    }
    return NestedLauncher(TORCHRUN, command, disagreement=disagreement(TORCHRUN, stated, topology))


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
