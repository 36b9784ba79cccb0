"""``ascendify perf``: why a job is slow. Every rank's step split (Ascend's parts: computing,
communication not overlapped, overlapped, free, preparing) from its profiler traces, the slow rank
and its cause, and two runs compared by module and operator. See docs/perf.md."""

from __future__ import annotations

from ascendify.perf.report import Analysis, analyse, render, to_json

__all__ = ["Analysis", "analyse", "render", "to_json"]
