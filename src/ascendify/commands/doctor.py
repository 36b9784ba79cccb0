"""``ascendify doctor``: check the Python, torch, torch_npu, CANN, device and HCCL setup of this host."""

from __future__ import annotations

import argparse

NAME = "doctor"
HELP = "Check this host's torch / torch_npu / CANN / device / HCCL setup; each problem with a one-line fix."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")


def run(args: argparse.Namespace) -> int:
    from ascendify.doctor import has_failures, print_checks, run_checks, to_json

    checks = run_checks()
    if args.json:
        print(to_json(checks))
    else:
        print_checks(checks)
    return 1 if has_failures(checks) else 0
