"""Kineto-shaped traces written from a plan of each step: how long the rank computed, waited in
the collective and sat idle, so a test knows the split it must get back."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PID, MAIN, GLOO = 100, 100, 101


@dataclass(frozen=True)
class PlannedStep:
    """Times in µs, in this order inside the step: idle, computing, communication (the last
    ``overlap`` µs of the computing also communicate)."""

    idle: float
    computing: float
    communication: float
    overlap: float = 0.0

    @property
    def length(self) -> float:
        return self.idle + self.computing + self.communication - self.overlap


def kineto_events(
    rank_steps: list[PlannedStep], first_step: int = 0, start: float = 1e6
) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    at = start
    for offset, plan in enumerate(rank_steps):
        events.append(
            _event(f"ProfilerStep#{first_step + offset}", "user_annotation", at, plan.length, MAIN)
        )
        compute_start = at + plan.idle
        # Two nested operators, as the profiler writes them: the outer one first.
        events.append(_event("aten::linear", "cpu_op", compute_start, plan.computing, MAIN))
        events.append(_event("aten::mm", "cpu_op", compute_start, plan.computing / 2, MAIN))
        talk = compute_start + plan.computing - plan.overlap
        events.append(_event("gloo:all_reduce", "user_annotation", talk, plan.communication, GLOO))
        at += plan.length
    return events


def _event(name: str, category: str, ts: float, duration: float, tid: int) -> dict[str, Any]:
    return {
        "ph": "X",
        "cat": category,
        "name": name,
        "pid": PID,
        "tid": tid,
        "ts": ts,
        "dur": duration,
    }


def write_kineto(path: Path, rank: int | None, steps: list[PlannedStep], **options: Any) -> Path:
    document: dict[str, Any] = {"schemaVersion": 1}
    if rank is not None:
        document["distributedInfo"] = {"backend": "gloo", "rank": rank, "world_size": 2}
    document["traceEvents"] = kineto_events(steps, **options)
    document["displayTimeUnit"] = "ms"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    return path
