"""Why did a job fail: failure signatures as data and the multi-rank log reader.

:func:`explain_paths` reads every rank's logs below the paths (a job's directory, a launcher log
dir, ModelArts downloads, plog folders), finds each known failure with its rank, time and line,
and names the rank that failed first and why, apart from the ranks that only failed because of
it. Below :mod:`ascendify.launch` and :mod:`ascendify.jobs`, which call it for their summaries; it
prints nothing itself. Importing this package is cheap (the launcher does): the catalogue and the
reader load on first use.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ascendify.explain.analysis import Explanation


def explain_paths(paths: Sequence[Path]) -> Explanation:
    """The verdict on the logs below ``paths``; :class:`~ascendify.explain.sources.ExplainInputError`
    when a path is missing or holds no log."""
    from ascendify.explain.analysis import explain
    from ascendify.explain.catalogue import load
    from ascendify.explain.reader import scan_all
    from ascendify.explain.sources import discover

    catalogue = load()
    inputs = discover(list(paths))
    return explain(scan_all(inputs.sources, catalogue, inputs.skipped), inputs, catalogue)


def cause_of(paths: Sequence[Path]) -> str | None:
    """The one-line cause for a failed run or job, or None (nothing known found, no logs);
    never raises for what it reads: a summary must not fail because a log is odd."""
    from ascendify.errors import AscendifyError
    from ascendify.explain.analysis import cause_line

    try:
        return cause_line(explain_paths(paths))
    except (OSError, AscendifyError):  # no logs to read
        return None
