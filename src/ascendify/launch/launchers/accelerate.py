"""``accelerate launch [options] SCRIPT ARGS`` as ascendify ranks, with accelerate's own functions.

accelerate's parser reads the options, its launch-command check merges the config file
(``--config_file``, else accelerate's default one) into them, and the function accelerate itself
uses to start torchrun gives the environment (``ACCELERATE_*``, FSDP/Megatron settings,
``OMP_NUM_THREADS``, the visible devices of ``--gpu_ids``: ``ASCEND_RT_VISIBLE_DEVICES`` on an
NPU host). That environment does not depend on the port or the node count, which ascendify
settles itself. Every form starts its ranks as torchrun does (``python -u SCRIPT ARGS``), the way
``accelerate launch --multi_gpu`` does: a single-process accelerate form would start one process
for the whole job. Without a config file, accelerate is told the job's counts, as its command line
would tell it, so its warning of defaults does not announce one process before several start.
The options that only accelerate's launcher reads (rendezvous, restarts, host files, TPU and
SageMaker settings: :data:`_INSTEAD`) are named in the disagreement line when given.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping

from ascendify.errors import AscendifyError
from ascendify.launch.launchers import (
    ACCELERATE,
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

_DEVICE_FILTERS = ("deepspeed_inclusion_filter", "deepspeed_exclusion_filter")
_TPU = "no TPU or SageMaker launch: the ranks start as torchrun's"
# The options only accelerate's launcher reads (its environment function reads the others).
_INSTEAD = {
    "rdzv_backend": PLACES_NODES,
    "rdzv_conf": PLACES_NODES,
    "same_network": PLACES_NODES,
    "max_restarts": "use ascendify run --max-restarts",
    "monitor_interval": "ascendify's agent watches the ranks",
    "tee": "use ascendify run --tee",
    "log_dir": "use ascendify run --log-dir",
    "role": "not applied by ascendify",
    "quiet": "each rank's output goes to its log and the console",
    "deepspeed_hostfile": PLACES_NODES,
    "deepspeed_multinode_launcher": STARTS_NODES,
    "mpirun_hostfile": STARTS_NODES,
    "tpu": _TPU,
    "tpu_use_cluster": _TPU,
    "tpu_use_sudo": _TPU,
    "vm": _TPU,
    "env": _TPU,
    "main_training_function": _TPU,
    "aws_access_key_id": _TPU,
    "aws_secret_access_key": _TPU,
}


def accelerate_launcher(args: tuple[str, ...], topology: Topology, cwd: str) -> NestedLauncher:
    from accelerate.commands.launch import launch_command_parser

    parsed = parse_with(launch_command_parser().parse_args, args, "accelerate launch")
    if parsed.config_file is not None:  # relative to the folder the command runs in
        parsed.config_file = os.path.join(cwd, parsed.config_file)
    flags = (parsed.num_processes, parsed.num_machines, parsed.machine_rank)
    address = (parsed.main_process_ip, parsed.main_process_port)
    defaults = launch_command_parser().parse_args([parsed.training_script])
    instead = {**_INSTEAD, **dict.fromkeys(_DEVICE_FILTERS, narrowing(topology))}
    applied = set(vars(parsed)) - set(instead)
    left = left_out(parsed, defaults, applied, instead, lambda dest: f"--{dest}")
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
        "--main_process_ip": (address[0], topology.master_addr),
        "--main_process_port": (address[1], topology.master_port or "a free port"),
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
        disagreement=disagreement("accelerate launch", stated, topology, left),
    )


def _environment(parsed: argparse.Namespace, topology: Topology) -> tuple[dict[str, str], bool]:
    """The variables accelerate's launcher adds for the ranks (only those it adds or changes),
    and whether a config file was read into ``parsed``."""
    from accelerate.commands.config import default_config_file
    from accelerate.commands.launch import _validate_launch_command
    from accelerate.utils import prepare_deepspeed_cmd_env, prepare_multi_gpu_env

    # accelerate's own test for reading a config file; without one, it fills the counts left out
    # with 1 and says so: they are the job's (what it does with them is the same).
    reads_config = parsed.config_file is not None or (
        os.path.isfile(default_config_file) and not parsed.cpu
    )
    if not reads_config and topology.world_size > 1:
        parsed.num_processes = parsed.num_processes or topology.world_size
        parsed.num_machines = parsed.num_machines or topology.nnodes
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
