"""Nested launchers: ``ascendify run [its options] accelerate launch|deepspeed|torchrun ... SCRIPT``.

A framework's launcher on the command line is not run: ascendify recognises it, reads its
options with the framework's own parser, and starts each rank itself with what that launcher
would have given it (the rank's command, the launcher's environment, DeepSpeed's
``--local_rank`` argument and CROSS_*/LOCAL_SIZE variables). The topology (cards per node, node
count, node rank, master) comes from ascendify's own sources; counts the nested launcher names
that disagree are reported in one line, and the topology wins. The result is pure data on the
spec (:class:`NestedLauncher`): the same plan and the same agent as a plain script, so restarts,
hang stacks, per-rank logs and metrics hold unchanged.

Recognising a form (:func:`recognise`) imports nothing; reading its options imports the
framework (and torch) only for that form, with its standard output sent to standard error: a
framework that prints while it loads (DeepSpeed names its accelerator) must not spoil
``--dry-run``'s JSON.

Every option the framework's parser read is honoured or named: an option whose value is not the
framework's default and that ascendify does not apply goes into the one disagreement line with
what ascendify does instead (:func:`left_out`).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from ascendify.errors import AscendifyError

ACCELERATE, DEEPSPEED, TORCHRUN = "accelerate", "deepspeed", "torchrun"

# Executables (by base name) and ``python -m`` modules of each launcher.
_EXECUTABLES = {
    "accelerate-launch": ACCELERATE,
    "deepspeed": DEEPSPEED,
    "ds": DEEPSPEED,
    "torchrun": TORCHRUN,
}
_MODULES = {
    "accelerate.commands.launch": ACCELERATE,
    "deepspeed.launcher.runner": DEEPSPEED,
    "torch.distributed.run": TORCHRUN,
}
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")


@dataclass(frozen=True)
class Topology:
    """What ascendify's sources say about the job: the nested launcher's counts yield to it."""

    nproc_per_node: int
    nnodes: int
    node_rank: int
    master_addr: str
    master_port: int | None
    devices: tuple[str, ...] = ()  # this node's cards, as the ranks get them

    @property
    def world_size(self) -> int:
        return self.nproc_per_node * self.nnodes


@dataclass(frozen=True)
class NestedLauncher:
    """What a nested launcher gives each rank, as pure data the plan reads."""

    name: str  # accelerate, deepspeed or torchrun
    command: tuple[str, ...]  # what every rank runs, before per-rank arguments
    env: Mapping[str, str] = field(default_factory=dict)  # set alike on every rank
    # DeepSpeed: ``--local_rank=N`` goes into the command at this index (right after the script).
    local_rank_at: int | None = None
    # DeepSpeed: CROSS_RANK, CROSS_SIZE, LOCAL_SIZE, every local card visible to each rank, and
    # no OMP_NUM_THREADS (torchrun's default of 1 for several ranks; DeepSpeed's launcher sets none).
    deepspeed_env: bool = False
    disagreement: str = ""  # one line, empty when the launcher's counts match the topology


def recognise(command: tuple[str, ...]) -> tuple[str, tuple[str, ...]] | None:
    """``(launcher, its arguments)`` when ``command`` starts a nested launcher, else None."""
    if not command:
        return None
    program = os.path.basename(command[0])
    if program == "accelerate" and command[1:2] == ("launch",):
        return ACCELERATE, command[2:]
    if program in _EXECUTABLES:
        return _EXECUTABLES[program], command[1:]
    if _PYTHON.fullmatch(program) and command[1:2] == ("-m",) and command[2:3]:
        name = _MODULES.get(command[2])
        if name is not None:
            return name, command[3:]
    return None


def nested_launcher(
    name: str, args: tuple[str, ...], topology: Topology, cwd: str
) -> NestedLauncher:
    """Read ``args`` with the framework's own parser; ``cwd`` is where relative files are."""
    with contextlib.redirect_stdout(sys.stderr):
        return _read_options(name, args, topology, cwd)


def _read_options(name: str, args: tuple[str, ...], topology: Topology, cwd: str) -> NestedLauncher:
    try:
        if name == ACCELERATE:
            from ascendify.launch.launchers.accelerate import accelerate_launcher

            return accelerate_launcher(args, topology, cwd)
        if name == DEEPSPEED:
            from ascendify.launch.launchers.deepspeed import deepspeed_launcher

            return deepspeed_launcher(args, topology)
        from ascendify.launch.launchers.torchrun import torchrun_launcher

        return torchrun_launcher(args, topology)
    except ImportError as error:
        raise AscendifyError(
            f"{name} on the command line needs {name if name != TORCHRUN else 'torch'} in the "
            f"Python that runs ascendify ({sys.executable}): {error}"
        ) from None


def disagreement(
    launcher: str,
    stated: Mapping[str, tuple[object, object]],
    topology: Topology,
    left: Sequence[str] = (),
) -> str:
    """One line naming the launcher's counts that differ from the topology and the options
    ascendify leaves out (``left``, from :func:`left_out`); "" when there are none.

    ``stated`` maps an option as the launcher spells it to ``(value, what the topology says)``.
    """
    differing = [
        f"{option} {value} (the job: {expected})"
        for option, (value, expected) in stated.items()
        if value is not None and str(value) != str(expected)
    ]
    parts = [f"{launcher} asks for {', '.join(differing)}"] if differing else []
    if left:
        parts.append(
            f"{'' if parts else launcher + ' '}options ascendify leaves out: {', '.join(left)}"
        )
    if not parts:
        return ""
    return (
        f"{'; '.join(parts)}; ascendify's topology wins: "
        f"{topology.nnodes} node(s) x {topology.nproc_per_node} rank(s)"
    )


def left_out(
    parsed: argparse.Namespace,
    defaults: argparse.Namespace,
    applied: Collection[str],
    instead: Mapping[str, str],
    flag: Callable[[str], str],
) -> list[str]:
    """``OPTION VALUE (what ascendify does instead)`` for every option given a value other than
    the framework's default that ascendify does not apply (not in ``applied``): those ``instead``
    explains, and any other one too (a newer framework's), so none is dropped without a word."""
    pieces = []
    for dest, value in vars(parsed).items():
        if dest in applied or value == getattr(defaults, dest, value):
            continue
        shown = flag(dest) if value is True else f"{flag(dest)} {value}"
        pieces.append(f"{shown} ({instead.get(dest, 'not applied by ascendify')})")
    return pieces


def narrowing(topology: Topology) -> str:
    """What ascendify does instead of a launcher's own choice of cards."""
    return (
        f"the ranks use the job's devices {','.join(topology.devices) or 'found'}: narrow them "
        "with ASCEND_RT_VISIBLE_DEVICES or CUDA_VISIBLE_DEVICES and --nproc-per-node"
    )


# What ascendify does where a launcher would start remote nodes itself.
PLACES_NODES = "ascendify places the nodes: --nnodes, --node-rank, --master-addr or the platform"
STARTS_NODES = "ascendify starts each node's ranks itself, without ssh, pdsh or mpirun"


def parse_with(
    parse: Callable[[list[str]], argparse.Namespace], args: tuple[str, ...], launcher: str
) -> argparse.Namespace:
    """``parse(args)`` (a framework's argparse), its usage errors as one line (it would exit)."""
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            return parse(list(args))
    except SystemExit:
        lines = [line for line in errors.getvalue().splitlines() if line.strip()]
        why = lines[-1] if lines else "bad arguments"
        raise AscendifyError(f"{launcher}: {why}") from None


def python_command(
    script: str, script_args: list[str], *, module: bool, no_python: bool
) -> tuple[str, ...]:
    """A rank's command as torchrun and DeepSpeed start it: ``python -u [-m] SCRIPT ARGS``.

    The interpreter is the one running ascendify: it could import the framework to read its
    options, as the framework's launcher runs its ranks under its own interpreter.
    """
    if no_python:
        return (script, *script_args)
    return (sys.executable, "-u", *(("-m",) if module else ()), script, *script_args)
