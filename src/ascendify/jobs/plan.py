"""A job -> what each of its nodes runs: pre-start steps, then the launcher's node agent. Pure.

Every node runs ``python -m ascendify run`` (the existing launcher) with its node rank and node
0's address, exactly as a user would type it on each machine. Before it, as on ModelArts:
``pip install -r requirements.txt`` when asked, and ``ma-pre-start.sh`` when the code has one.
Its ranks start in the node's job dir, with ModelArts' container variables (see
:mod:`ascendify.jobs.container`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ascendify.jobs.container import PRE_START_SCRIPT, REQUIREMENTS, container_env
from ascendify.jobs.layout import JobLayout
from ascendify.jobs.spec import JobSpec
from ascendify.launch.options import JOB_SETTINGS, LaunchOptions, to_argv
from ascendify.limits import MAX_LOCAL_NODES


@dataclass(frozen=True)
class Step:
    what: str  # how the worker log and a failure name it
    argv: tuple[str, ...]


@dataclass(frozen=True)
class NodePlan:
    node: int
    address: str
    steps: tuple[Step, ...]
    env: Mapping[str, str]  # added to the inherited environment


@dataclass(frozen=True)
class CodeFiles:
    """Which optional files the job's code holds: each adds a step before the launcher."""

    requirements: bool
    pre_start: bool


def code_files(code: Path) -> CodeFiles:
    """The optional files found in the code folder ``code`` (the one look at the disk here)."""
    return CodeFiles((code / REQUIREMENTS).is_file(), (code / PRE_START_SCRIPT).is_file())


def node_plans(
    spec: JobSpec,
    layout: JobLayout,
    *,
    addresses: tuple[str, ...],
    master_port: int,
    python: str,
    files: CodeFiles,
) -> list[NodePlan]:
    """The plan of every node of the job, in node order."""
    return [
        node_plan(
            spec,
            layout,
            node=node,
            addresses=addresses,
            master_port=master_port,
            python=python,
            files=files,
        )
        for node in range(spec.nodes)
    ]


def node_plan(
    spec: JobSpec,
    layout: JobLayout,
    *,
    node: int,
    addresses: tuple[str, ...],
    master_port: int,
    python: str,
    files: CodeFiles,
) -> NodePlan:
    steps: list[Step] = []
    if spec.install_requirements and files.requirements:
        pip = (python, "-m", "pip", "install", "-r", str(layout.code / REQUIREMENTS))
        steps.append(Step(f"pip install -r {REQUIREMENTS}", pip))
    if files.pre_start:
        steps.append(Step(PRE_START_SCRIPT, ("bash", str(layout.code / PRE_START_SCRIPT))))
    steps.append(
        Step(
            "launcher",
            agent_argv(
                spec, layout, node=node, addresses=addresses, master_port=master_port, python=python
            ),
        )
    )
    # The job's own variables win over a stored spec's env from before they were refused there.
    env = {**spec.env, **container_env(spec, layout, node=node, addresses=addresses)}
    return NodePlan(node, addresses[node], tuple(steps), env)


def agent_argv(
    spec: JobSpec,
    layout: JobLayout,
    *,
    node: int,
    addresses: tuple[str, ...],
    master_port: int,
    python: str,
) -> tuple[str, ...]:
    """``ascendify run`` for one node of the job."""
    # As on ModelArts: the ranks start in the job dir, which holds the code under its own name.
    job_dir = layout.job_dir(node)
    placed: dict[str, Any] = {}
    if spec.nodes > 1:
        placed = {
            "node_rank": node,
            "master_addr": addresses[0],
            "master_port": master_port,
            "local_addr": addresses[node],
        }
    options = launch_options(
        spec,
        spec.command(python, job_dir / spec.code_folder),
        log_dir=layout.launcher_dir(node),
        job_id=layout.platform_job_id,
        cwd=job_dir,
        **placed,
    )
    return (python, "-m", "ascendify", "run", *to_argv(options))


def launch_options(spec: JobSpec, command: tuple[str, ...], **node: Any) -> LaunchOptions:
    """The launcher's options of every node of the job: its counts and the settings a job
    passes through (:data:`~ascendify.launch.options.JOB_SETTINGS`); ``node`` adds one node's
    own (its rank, its folders)."""
    return LaunchOptions(
        command=command,
        nproc_per_node=str(spec.cards),
        nnodes=spec.nodes if spec.nodes > 1 else None,
        min_nnodes=spec.elastic or None,
        verbatim=spec.no_python,
        **{name: getattr(spec, name) for name in JOB_SETTINGS},
        **node,
    )


def loopback_addresses(nodes: int) -> tuple[str, ...]:
    """One loopback address per node (127.0.0.1, 127.0.0.2, ...): a multi-node job on one host."""
    if nodes > MAX_LOCAL_NODES:  # the spec's validation refuses more
        raise ValueError(
            f"a local job has at most {MAX_LOCAL_NODES} nodes (one loopback address each)"
        )
    return tuple(f"127.0.0.{node + 1}" for node in range(nodes))
