"""``ascendify perf PATH``: every rank's step split, the slow rank and its cause;
``ascendify perf compare A B``: two runs by module and operator."""

from __future__ import annotations

import argparse
import json

from ascendify.errors import AscendifyError

NAME = "perf"
HELP = (
    "Why is it slow: read every rank's profiler traces (a run's log dir, a job id, kineto JSON, "
    "*_ascend_pt folders, msprof-analyze's cluster output), split each step and name the slow "
    "rank and its cause; `perf compare A B` ranks modules and operators by their time gap."
)
COMPARE = "compare"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = "%(prog)s [--json] PATH | %(prog)s [--json] compare A B"
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="a run's log folder, a job id, or traces; or `compare A B` (a folder named "
        "compare: ./compare)",
    )
    parser.add_argument("--json", action="store_true", help="print the analysis as JSON")


def run(args: argparse.Namespace) -> int:
    if args.paths[0] == COMPARE:
        if len(args.paths) != 3:
            raise AscendifyError("compare takes two runs: ascendify perf compare A B")
        return _compare(args.paths[1], args.paths[2], args.json)
    if len(args.paths) != 1:
        raise AscendifyError("give one run (a log folder, a job id or traces), or compare A B")
    from ascendify.perf import analyse, render, to_json

    analysis = analyse(args.paths[0])
    print(json.dumps(to_json(analysis), indent=2) if args.json else render(analysis))
    return 0


def _compare(a: str, b: str, as_json: bool) -> int:
    from ascendify.perf.compare import compare_runs, render, to_json

    comparison = compare_runs(a, b)
    print(json.dumps(to_json(comparison), indent=2) if as_json else render(comparison))
    return 0
