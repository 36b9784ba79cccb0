"""Why did a job fail: failure signatures as data and the multi-rank log reader.

``explain_paths([...])`` reads every rank's logs below the paths (a job's directory, a launcher
log dir, ModelArts downloads, plog folders), finds each known failure with its rank, time and
line, and names the rank that failed first and why, apart from the ranks that only failed
because of it. Below :mod:`ascendify.launch` and :mod:`ascendify.jobs`, which call it for their
summaries; it prints nothing itself.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from ascendify.explain.analysis import Explanation, cause_line, explain, render, to_json
from ascendify.explain.catalogue import Catalogue, load
from ascendify.explain.reader import Finding, scan
from ascendify.explain.sources import ExplainInputError, Inputs, discover

__all__ = [
    "ExplainInputError",
    "Explanation",
    "cause_line",
    "explain_paths",
    "render",
    "to_json",
]


def explain_paths(paths: Sequence[Path], catalogue: Catalogue | None = None) -> Explanation:
    catalogue = catalogue or load()
    inputs = discover(list(paths))
    return explain(_findings(inputs, catalogue), inputs, catalogue)


def _findings(inputs: Inputs, catalogue: Catalogue) -> Iterator[Finding]:
    for source in inputs.sources:
        try:
            yield from scan(source, catalogue)
        except OSError:
            continue  # a log that vanished or cannot be read says nothing; the others still do
