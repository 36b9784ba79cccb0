"""``ascendify perf PATH``: every rank's step split, the slow rank and its cause."""

from __future__ import annotations

import argparse
import json

NAME = "perf"
HELP = (
    "Why is it slow: read every rank's profiler traces (a run's log dir, a job id, kineto JSON, "
    "*_ascend_pt folders, msprof-analyze's cluster output), split each step and name the slow "
    "rank and its cause."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="a run's log folder, a job id, or traces")
    parser.add_argument("--json", action="store_true", help="print the analysis as JSON")


def run(args: argparse.Namespace) -> int:
    from ascendify.perf import analyse, render, to_json

    analysis = analyse(args.path)
    print(json.dumps(to_json(analysis), indent=2) if args.json else render(analysis))
    return 0
