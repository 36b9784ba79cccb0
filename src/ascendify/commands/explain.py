"""``ascendify explain PATH...``: name the cause of a failed job from every rank's logs."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

NAME = "explain"
HELP = (
    "Why did it fail: read every rank's logs (a job dir, a --log-dir, ModelArts downloads, plog "
    "folders) and name the rank that failed first, the cause and the fix."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="log files or folders")
    parser.add_argument("--json", action="store_true", help="print the verdict as JSON")


def run(args: argparse.Namespace) -> int:
    from ascendify.explain import explain_paths
    from ascendify.explain.analysis import render, to_json

    explanation = explain_paths(args.paths)
    print(json.dumps(to_json(explanation), indent=2) if args.json else render(explanation))
    return 1 if explanation.found else 0
