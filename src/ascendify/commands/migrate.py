"""``ascendify migrate``: rewrite a PyTorch GPU project for Ascend NPUs (see docs/migrate.md)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ascendify.targets.facts import DEFAULT_VERSION

NAME = "migrate"
HELP = "Rewrite a PyTorch GPU project for Ascend NPUs into OUT/<name>_msft, with a change list."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-i", "--input", required=True, type=Path, help="project directory (SRC)")
    parser.add_argument(
        "-o", "--output", type=Path,
        help="directory that receives <name>_msft/ (not needed with --diff/--check)",
    )  # fmt: skip
    parser.add_argument(
        "-v", "--version", dest="torch_npu_version", default=None,
        help=f"PyTorch/torch_npu version whose NPU APIs may be emitted (default: {DEFAULT_VERSION})",
    )  # fmt: skip
    parser.add_argument("--diff", action="store_true", help="print a unified diff; write nothing")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if anything would change; write nothing"
    )
    parser.add_argument(
        "-j", "--jobs", type=int, default=os.cpu_count() or 1,
        help="worker processes (default: all cores)",
    )  # fmt: skip
    parser.add_argument(
        "--force", action="store_true", help="replace an existing non-empty result directory"
    )


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from ascendify.errors import AscendifyError
    from ascendify.migrate import Options, Settings, run_migration
    from ascendify.targets import resolve_version

    if args.jobs < 1:
        raise AscendifyError(f"-j must be at least 1, not {args.jobs}")
    settings = Settings(torch_npu_version=resolve_version(args.torch_npu_version))
    options = Options(
        source=args.input,
        output=args.output,
        settings=settings,
        jobs=args.jobs,
        force=args.force,
        diff=args.diff,
        check=args.check,
    )
    return run_migration(options, Console(), Console(stderr=True))
