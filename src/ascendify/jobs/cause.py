"""Why a failed job failed, read from every rank's logs by :mod:`ascendify.explain`; kept in the
job's directory once the job has ended, so that ``job list`` reads it without reading logs."""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING

from ascendify.jobs.layout import JobLayout
from ascendify.jobs.store import JobRecord

if TYPE_CHECKING:
    from ascendify.explain.analysis import Explanation

CAUSE_NAME = "cause.json"


def job_cause(job: JobRecord, layout: JobLayout) -> dict[str, str | None]:
    """``{"cause": one line with the fix, "short": rank and error}``; empty for a job that did not
    fail or whose logs name no known cause."""
    if job.state != "failed":
        return {}
    cache = layout.root / CAUSE_NAME
    with contextlib.suppress(OSError, ValueError):
        cached: dict[str, str | None] = json.loads(cache.read_text(encoding="utf-8"))
        return cached
    verdict = explain_job(layout)
    found: dict[str, str | None] = {}
    if verdict is not None:
        from ascendify.explain.analysis import cause_line, short_cause

        found = {"cause": cause_line(verdict), "short": short_cause(verdict)}
    if job.ended is not None:  # final: the logs will not change
        with contextlib.suppress(OSError):
            cache.write_text(json.dumps(found), encoding="utf-8")
    return found


def explain_job(layout: JobLayout) -> Explanation | None:
    """The explanation of the job's logs, or None when there are none to read."""
    from ascendify.errors import AscendifyError
    from ascendify.explain import explain_paths

    try:
        return explain_paths([layout.logs])
    except (OSError, AscendifyError):
        return None
