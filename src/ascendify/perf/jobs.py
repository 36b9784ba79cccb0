"""A recorded job's profile, for ``job describe`` and the job page: read when the job was
submitted with ``--profile`` and its ranks wrote traces, else nothing (never an error: a
description must not fail because a trace is odd)."""

from __future__ import annotations

from typing import Any

from ascendify.errors import AscendifyError
from ascendify.jobs.layout import JobLayout
from ascendify.perf.report import Analysis, analyse_folders, render, to_json
from ascendify.perf.sources import job_profile_folders


def job_profile(layout: JobLayout, nodes: int, cards: int) -> Analysis | None:
    present = job_profile_folders(layout, nodes)
    if not present:
        return None
    try:
        return analyse_folders(present, set(range(nodes * cards)), str(layout.root))
    except (AscendifyError, OSError):
        return None


def describe_lines(analysis: Analysis) -> list[str]:
    """The section of ``job describe``: the verdict and each rank's median step split."""
    return [
        "performance (ascendify perf):",
        *(f"  {line}" for line in render(analysis).splitlines()),
    ]


def job_profile_json(layout: JobLayout, nodes: int, cards: int) -> dict[str, Any] | None:
    analysis = job_profile(layout, nodes, cards)
    return None if analysis is None else to_json(analysis)
