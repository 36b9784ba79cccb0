"""The launcher: one process per accelerator card, on one node or many (``ascendify run``).

Library use::

    from ascendify.launch import LaunchOptions, resolve_spec, run_job

    spec = resolve_spec(LaunchOptions(command=("python", "train.py"), nproc_per_node="2"))
    result = run_job(spec)  # RunResult: state, exit_code, root_cause, exit_codes, log_dir

The stages are separate so each can be used and tested alone: :func:`resolve_spec` (options +
platform environment + machine -> spec), :func:`plan_node` (pure: spec + assignment -> per-rank
argv/env/cwd/log), :class:`Agent` (spawn, supervise, tear down).
"""

from __future__ import annotations

from ascendify.launch.agent import Agent, RankFailure, RunResult
from ascendify.launch.job import preview, run_job
from ascendify.launch.plan import LaunchPlan, NodeAssignment, WorkerPlan, plan_node, plan_to_json
from ascendify.launch.spec import LaunchOptions, LaunchSpec
from ascendify.launch.topology import resolve_spec

__all__ = [
    "Agent",
    "LaunchOptions",
    "LaunchPlan",
    "LaunchSpec",
    "NodeAssignment",
    "RankFailure",
    "RunResult",
    "WorkerPlan",
    "plan_node",
    "plan_to_json",
    "preview",
    "resolve_spec",
    "run_job",
]
