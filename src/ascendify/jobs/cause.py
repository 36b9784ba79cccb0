"""Why a failed job failed, read from every rank's logs by :mod:`ascendify.explain`; kept in the
job's directory once the job has ended, so that ``job list`` and the job's page read it without
reading logs."""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

from ascendify.jobs.layout import JobLayout
from ascendify.jobs.store import JobRecord

if TYPE_CHECKING:
    from ascendify.explain.analysis import Explanation

CAUSE_NAME = "cause.json"


def job_cause(job: JobRecord, layout: JobLayout) -> dict[str, Any]:
    """``{"cause": one line with the fix, "short": rank and error, "verdict": the explanation as
    data, each rank's headline only}``, None where the logs name no known cause; empty for a job
    that did not fail."""
    if job.state != "failed":
        return {}
    cache = layout.root / CAUSE_NAME
    with contextlib.suppress(OSError, ValueError):
        cached: dict[str, Any] = json.loads(cache.read_text(encoding="utf-8"))
        if "verdict" in cached:  # else written before the verdict was kept: read the logs again
            return cached
    verdict = explain_job(layout)
    found: dict[str, Any] = {"cause": None, "short": None, "verdict": None}
    if verdict is not None and verdict.found:
        from ascendify.explain.analysis import cause_line, short_cause, to_json

        found = {
            "cause": cause_line(verdict),
            "short": short_cause(verdict),
            "verdict": to_json(verdict, findings=False),
        }
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
