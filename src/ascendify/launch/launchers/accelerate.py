"""``accelerate launch [options] SCRIPT ARGS`` as ascendify ranks, with accelerate's own functions.

accelerate's parser reads the options, its launch-command check merges the config file
(``--config_file``, else accelerate's default one) into them, and the function accelerate itself
uses to start torchrun gives the environment (``ACCELERATE_*``, FSDP/Megatron settings,
``OMP_NUM_THREADS``, the visible devices of ``--gpu_ids``: ``ASCEND_RT_VISIBLE_DEVICES`` on an
NPU host). That environment does not depend on the port or the node count, which ascendify
settles itself. Every form starts its ranks as torchrun does (``python -u SCRIPT ARGS``), the way
``accelerate launch --multi_gpu`` does: a single-process accelerate form would start one process
for the whole job.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping

from ascendify.errors import AscendifyError
from ascendify.launch.launchers import (
    ACCELERATE,
    NestedLauncher,
    Topology,
    disagreement,
    parse_with,
    python_command,
)


def accelerate_launcher(args: tuple[str, ...], topology: Topology, cwd: str) -> NestedLauncher:
    from accelerate.commands.launch import launch_command_parser

    parsed = parse_with(launch_command_parser().parse_args, args, "accelerate launch")
    if parsed.config_file is not None:  # relative to the folder the command runs in
        parsed.config_file = os.path.join(cwd, parsed.config_file)
    flags = (parsed.num_processes, parsed.num_machines, parsed.machine_rank)
    try:
        env, from_config = _environment(parsed, topology)
    except (ValueError, RuntimeError, OSError) as error:
        raise AscendifyError(f"accelerate launch: {error}") from None
    # What the launch command named, in its flags or its config file (not a device count).
    named = (
        (parsed.num_processes, parsed.num_machines, parsed.machine_rank) if from_config else flags
    )
    stated = {
        "--num_processes": (named[0], topology.world_size),
        "--num_machines": (named[1], topology.nnodes),
        "--machine_rank": (named[2], topology.node_rank),
    }
    command = python_command(
        parsed.training_script,
        parsed.training_script_args,
        module=parsed.module,
        no_python=parsed.no_python,
    )
    return NestedLauncher(
        ACCELERATE,
        command,
        env=env,
        disagreement=disagreement("accelerate launch", stated, topology),
    )


def _environment(parsed: argparse.Namespace, topology: Topology) -> tuple[dict[str, str], bool]:
    """The variables accelerate's launcher adds for the ranks (only those it adds or changes),
    and whether a config file was read into ``parsed``."""
    from accelerate.commands.launch import _validate_launch_command
    from accelerate.utils import prepare_deepspeed_cmd_env, prepare_multi_gpu_env

    parsed, defaults, mixed_precision_from_config = _validate_launch_command(parsed)
    stated = (parsed.num_processes, parsed.num_machines, parsed.machine_rank)
    parsed.num_processes = topology.world_size
    # One machine and a port of its own choosing: accelerate then neither asks for a host file
    # nor probes ascendify's port; the rendezvous is ascendify's.
    parsed.num_machines, parsed.machine_rank, parsed.main_process_port = 1, 0, 0
    if parsed.use_deepspeed and not parsed.cpu:
        fields = list(defaults.deepspeed_config) if defaults else []
        if mixed_precision_from_config:
            fields.append("mixed_precision")
        parsed.deepspeed_fields_from_accelerate_config = ",".join(fields)
        parsed.deepspeed_multinode_launcher = "standard"
        _, env = prepare_deepspeed_cmd_env(parsed)
    else:
        env = prepare_multi_gpu_env(parsed)
    parsed.num_processes, parsed.num_machines, parsed.machine_rank = stated
    return _added(env, os.environ), defaults is not None


def _added(env: Mapping[str, str], before: Mapping[str, str]) -> dict[str, str]:
    return {name: value for name, value in env.items() if before.get(name) != value}
