"""``ascendify demo``: migrate the bundled GPU project and train it with the launcher."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

NAME = "demo"
HELP = "Migrate a bundled GPU training project and run it on this machine's cards (or CPU)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workdir",
        type=Path,
        help="where the copy, the migrations, logs and checkpoint go "
        "(default: $XDG_CACHE_HOME/ascendify/demo, else ~/.cache/ascendify/demo)",
    )


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from ascendify.demo import plan_demo, run_demo
    from ascendify.userdirs import cache_dir

    workdir = args.workdir or cache_dir(os.environ) / "demo"
    return run_demo(plan_demo(workdir.absolute(), os.environ), Console(stderr=True))
