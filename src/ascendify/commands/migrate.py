"""``ascendify migrate``: rewrite a PyTorch GPU project for Ascend NPUs (see docs/migrate.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ascendify._parallel import PARALLEL_FROM, default_jobs, jobs_option
from ascendify.targets.facts import version_help

NAME = "migrate"
TRANSPLANT_RESULT_DIR = "transplant_result_file"
HELP = "Rewrite a PyTorch GPU project for Ascend NPUs into OUT/<name>_msft, with a change list."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-i", "--input", required=True, type=Path, help="project directory (SRC)")
    parser.add_argument(
        "-o", "--output", type=Path,
        help="directory that receives <name>_msft/ (not needed with --diff/--check)",
    )  # fmt: skip
    parser.add_argument(
        "-v", "--version", dest="torch_npu_version", default=None,
        help=f"torch_npu release whose NPU APIs may be emitted: {version_help()}",
    )  # fmt: skip
    parser.add_argument("--diff", action="store_true", help="print a unified diff; write nothing")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if anything would change; write nothing"
    )
    parser.add_argument(
        "-j", "--jobs", type=jobs_option, default=default_jobs(),
        help=f"worker processes (default: the cores this process may use, %(default)s here); "
        f"fewer than {PARALLEL_FROM} files, or -j 1, run in-process",
    )  # fmt: skip
    parser.add_argument(
        "--force", action="store_true", help="replace an existing non-empty result directory"
    )
    parser.add_argument(
        "--enable", action="append", default=[], metavar="CODE",
        help="also run this opt-in rule (repeatable), e.g. NPU908: allow_tf32 -> allow_hf32",
    )  # fmt: skip
    parser.add_argument(
        "--transplant-result-file", action="store_const", const=TRANSPLANT_RESULT_DIR,
        default="", dest="reports",
        help=f"put the reports and the log in <result>/{TRANSPLANT_RESULT_DIR}/, as current "
        "msFmkTransplt (CANN) releases do",
    )  # fmt: skip
    parser.add_argument(
        "--no-analysis", action="store_true",
        help="skip the analysis of SRC (ascendify_analysis/, and its rows in unsupported_op)",
    )  # fmt: skip
    _add_mode_arguments(parser)


def _add_mode_arguments(parser: argparse.ArgumentParser) -> None:
    """The modes of docs/migrate-modes.md, in its order: an on/off mode's flag comes from its
    :class:`~ascendify.migrate.Switch`; the others take values and are added here."""
    from ascendify.migrate import iter_modes  # loads every rule: only when migrate is the command

    own = {
        "portable": _add_target,
        "distributed": _add_distributed,
        "rules": _add_rules_file,
        "tune": _add_tune,
    }
    for mode in iter_modes():
        if mode.switch is None:
            own[mode.name](parser)
        else:
            parser.add_argument(
                *mode.switch.flags, action="append_const", const=mode.name, dest="switches",
                default=[], help=mode.switch.help,
            )  # fmt: skip


def _add_target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--target", choices=("npu", "portable"), default="npu",
        help="npu: torch_npu code; portable: device-agnostic code for NPU, CUDA and CPU",
    )  # fmt: skip


def _add_rules_file(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-r", "--rule", "--rules", dest="rules", type=Path, metavar="FILE",
        help="custom rules: ascendify's (.json, or .toml on Python 3.11+) or msFmkTransplt's JSON "
        '({"rules": {"FuncNameModifyRule": ...}}); -r meant --replace-unsupported before, now -sim',
    )  # fmt: skip
    parser.add_argument(
        "--allow-builtin-rules", action="store_true",
        help="accept rules on builtins (print, open) and a second rename of one name",
    )  # fmt: skip


def _add_tune(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tune", nargs="?", const="safe", metavar="NAME,...|safe|all",
        help="also apply performance edits (docs/migrate-modes.md): safe (the default) changes "
        "nothing computed; all adds the unsafe ones; or rule names/codes",
    )  # fmt: skip


def _add_distributed(parser: argparse.ArgumentParser) -> None:
    modes = parser.add_subparsers(dest="mode", metavar="{distributed}")
    distributed = modes.add_parser(
        "distributed", help="turn a single-card script into a multi-card one (<name>_msft_multi)"
    )
    distributed.add_argument(
        "-m", "--main", required=True, type=Path, help="the entry script, inside SRC"
    )
    distributed.add_argument(
        "-t", "--target-model", "--target_model", dest="target_model", default="model",
        help="the model variable to wrap in DDP (default: model; e.g. self.model)",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from ascendify._console import console
    from ascendify.analyze.static import StaticAnalysis
    from ascendify.migrate import Options, Settings, opt_in_codes, run_migration
    from ascendify.migrate.extras import build_modes
    from ascendify.targets import resolve_version

    modes = build_modes(
        args.input,
        target=args.target,
        switches=args.switches,
        main=args.main if args.mode == "distributed" else None,
        model=args.target_model if args.mode == "distributed" else "model",
        rules_file=args.rules,
        allow_builtin_rules=args.allow_builtin_rules,
        tune=args.tune,
    )
    settings = Settings(
        torch_npu_version=resolve_version(args.torch_npu_version),
        modes=modes,
        enabled=opt_in_codes(args.enable),
    )
    options = Options(
        source=args.input,
        output=args.output,
        settings=settings,
        jobs=args.jobs,
        force=args.force,
        diff=args.diff,
        check=args.check,
        # A preview writes no reports: the analysis would be for nothing.
        companion=(
            None
            if args.no_analysis or args.diff or args.check
            else StaticAnalysis(settings.torch_npu_version)
        ),
        reports=args.reports,
    )
    return run_migration(options, console(), console(stderr=True))
