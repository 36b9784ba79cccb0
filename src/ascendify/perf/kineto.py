"""One rank's step split from a torch.profiler (kineto) JSON trace, read streaming.

Steps are the trace's ``ProfilerStep#N`` ranges. What computes: the device's kernels when the
trace has any (CUDA, ROCm), else the operators of the thread that runs the steps (a CPU-only run:
there the host thread is the only "device"). What communicates: collectives by name, on any
thread or stream (gloo's own threads, NCCL's kernels). :func:`ascendify.perf.intervals.split_step`
then splits each step as Ascend does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ascendify.perf.intervals import Timeline, split_step
from ascendify.perf.model import MODULE_RANGE, RankProfile, StepSplit, Totals, UnusableTrace
from ascendify.perf.stream import TraceReader

STEP_NAME = re.compile(r"ProfilerStep#(\d+)")
COLLECTIVE = re.compile(
    r"^(gloo:|nccl:|c10d::|hccl|hcom|record_param_comms)|nccl\w*Kernel|all_?reduce|all_?gather|"
    r"reduce_?scatter|all_?to_?all|broadcast|send_?recv",
    re.IGNORECASE,
)
DEVICE_CATEGORIES = frozenset(("kernel", "gpu_memcpy", "gpu_memset"))
# The autograd engine's range around each backward node: the node's own range is inside it.
AUTOGRAD_WRAPPER = "autograd::engine::evaluate_function: "
HOST_CATEGORIES = frozenset(("cpu_op", "operator"))  # "operator": older kineto's name


@dataclass
class _Gathered:
    """What one pass over the events keeps: intervals and totals, never the events."""

    steps: dict[int, tuple[float, float, Any]] = field(default_factory=dict)
    host: dict[Any, Timeline] = field(default_factory=dict)  # per thread, collectives excluded
    host_operators: dict[Any, Totals] = field(default_factory=dict)
    device: Timeline = field(default_factory=Timeline)
    device_operators: Totals = field(default_factory=Totals)
    host_collectives: dict[Any, Timeline] = field(default_factory=dict)  # per process
    device_collectives: Timeline = field(default_factory=Timeline)
    modules: Totals = field(default_factory=Totals)


def read_kineto(path: Path, rank: int | None = None) -> RankProfile:
    """The rank's profile; ``rank`` when the trace does not say (no ``distributedInfo``)."""
    reader = TraceReader(path)
    gathered = _gather(reader.events())
    info = reader.header.get("distributedInfo")
    if isinstance(info, dict) and isinstance(info.get("rank"), int):
        rank = info["rank"]
    if rank is None:
        raise UnusableTrace(f"{path}: the trace does not name its rank (no distributedInfo)")
    return _profile(path, rank, gathered)


def _gather(events: Iterable[Any]) -> _Gathered:
    found = _Gathered()
    talks: dict[str, bool] = {}  # name -> a collective: names repeat, the pattern runs once each
    for event in events:
        if not isinstance(event, dict) or event.get("ph") != "X":
            continue
        name, category = event.get("name"), event.get("cat")
        start, duration = event.get("ts"), event.get("dur")
        if type(start) is not float or type(duration) is not float:  # kineto writes floats: fast
            start, duration = number(start), number(duration)
        if not isinstance(name, str) or start is None or duration is None:
            continue
        collective = talks.get(name)
        if collective is None:
            collective = talks[name] = COLLECTIVE.search(name) is not None
        end = start + duration
        if category in DEVICE_CATEGORIES:
            (found.device_collectives if collective else found.device).add(start, end)
            found.device_operators.add(name, duration)
        elif collective:
            found.host_collectives.setdefault(event.get("pid"), Timeline()).add(start, end)
        elif category in HOST_CATEGORIES:
            thread = (event.get("pid"), event.get("tid"))
            found.host.setdefault(thread, Timeline()).add(start, end)
            if not name.startswith(AUTOGRAD_WRAPPER):
                found.host_operators.setdefault(thread, Totals()).add(name, duration)
        elif (step := STEP_NAME.fullmatch(name)) is not None:
            thread = (event.get("pid"), event.get("tid"))
            found.steps.setdefault(int(step.group(1)), (start, end, thread))
        elif name.startswith(MODULE_RANGE):
            found.modules.add(name.removeprefix(MODULE_RANGE), duration)
    return found


def number(value: Any) -> float | None:
    """A time stamp or duration; Ascend's traces write them as strings."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _profile(path: Path, rank: int, found: _Gathered) -> RankProfile:
    if not found.steps:
        raise UnusableTrace(
            f"{path}: no ProfilerStep#N ranges (0 steps): was the profiler stepped, "
            "and did the run reach the profiled steps?"
        )
    thread = next(iter(found.steps.values()))[2]
    on_device = len(found.device) + len(found.device_collectives) > 0
    if on_device:
        computing, communication = found.device.merged(), found.device_collectives.merged()
    else:
        computing = found.host.get(thread, Timeline()).merged()
        communication = found.host_collectives.get(thread[0], Timeline()).merged()
    steps = tuple(
        StepSplit.from_split(index, split_step(computing, communication, start, end))
        for index, (start, end, _) in sorted(found.steps.items())
    )
    operators = found.device_operators if on_device else found.host_operators.get(thread, Totals())
    return RankProfile(
        rank=rank,
        source=path,
        format="kineto",
        steps=steps,
        timeline="device kernels" if on_device else "host thread (no device kernels in the trace)",
        step_start_us=min(start for start, _, _ in found.steps.values()),
        operators=operators,
        modules=found.modules,
    )
