"""``ascendify compare``: record a program's module calls without editing it, and find where two runs part."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ascendify.compare.session import DumpOutcome
    from ascendify.compare.settings import DumpSettings

NAME = "compare"
HELP = (
    "Find where two runs' numbers part: 'compare dump -o DIR -- python train.py' records every "
    "module call, 'compare A B' names the first divergence, 'compare run --a CMD --b CMD' does both."
)
USAGE = """\
ascendify compare dump -o DIR [--steps N] [--level stats|tensors] [--modules REGEX] [--backward]
                       [--step-on auto|optimizer|forward] [--max-elements N] -- CMD ARGS...
ascendify compare A B [-o OUT] [--tolerance auto|strict|msprobe|bf16|fp16]
ascendify compare run --a "CMD_A" --b "CMD_B" [-o OUT] [dump and tolerance options]"""
EPILOG = (
    "Exit codes: 0 every record within tolerance, 1 a divergence, 2 bad input (a missing dump "
    "file, dumps of different programs). 'compare dump' exits with the command's own code."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = USAGE
    parser.epilog = EPILOG
    # The options the forms share may also come first (`compare -o OUT A B`): passed on to the form.
    parser.add_argument("-o", "--output", help=argparse.SUPPRESS)
    parser.add_argument("--tolerance", help=argparse.SUPPRESS)
    parser.add_argument("words", nargs=argparse.REMAINDER, help="dump ..., run ..., or A B")


def _add_dump_options(parser: argparse.ArgumentParser) -> None:
    from ascendify.compare.settings import LEVELS, STEP_ON, DumpSettings

    defaults = DumpSettings()
    add = parser.add_argument
    add(
        "--steps",
        type=int,
        default=defaults.steps,
        help="steps to record, 0 for all (default %(default)s)",
    )
    add(
        "--level",
        choices=LEVELS,
        default=defaults.level,
        help="tensors: also a strided sample of each tensor",
    )
    add("--modules", metavar="REGEX", help="record only module paths this expression finds")
    add(
        "--backward", action="store_true", help="also gradients of module outputs and of parameters"
    )
    add(
        "--step-on",
        choices=STEP_ON,
        default=defaults.step_on,
        help="what ends a step: optimizer.step(), a top-level module call (inference), or auto",
    )
    add("--max-elements", type=int, default=defaults.max_elements,
        help="--level tensors: elements kept per tensor (default %(default)s)")  # fmt: skip


def _add_compare_options(parser: argparse.ArgumentParser) -> None:
    from ascendify.compare.metrics import TOLERANCES

    parser.add_argument(
        "--tolerance", choices=TOLERANCES, default="auto",
        help="auto (default): fp32's budget, or a lower-precision dtype's where a tensor has one; "
        "strict: fp32 rounding only; msprobe: its verdict; bf16, fp16: that format's budget "
        "everywhere (a run under autocast)",
    )  # fmt: skip


def _settings(args: argparse.Namespace) -> DumpSettings:
    from ascendify.compare.settings import DumpSettings

    return DumpSettings(
        args.steps, args.level, args.modules, args.backward, args.step_on, args.max_elements
    ).check()


def run(args: argparse.Namespace) -> int:
    words: list[str] = list(args.words)
    form = words.pop(0) if words[:1] in (["dump"], ["run"]) else None
    if args.tolerance is not None:
        words[:0] = ["--tolerance", args.tolerance]
    if args.output is not None:
        words[:0] = ["-o", args.output]
    if form == "dump":
        return _dump(words)
    if form == "run":
        return _run(words)
    return _compare(words)


def _dump(words: list[str]) -> int:
    from ascendify.compare.session import dump_program

    parser = argparse.ArgumentParser(prog="ascendify compare dump")
    parser.add_argument(
        "-o", "--output", type=Path, required=True, help="a new folder for the dump"
    )
    _add_dump_options(parser)
    parser.add_argument("command", nargs=argparse.REMAINDER, metavar="-- CMD ARGS...")
    args = parser.parse_args(words)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    outcome = dump_program(command, args.output, _settings(args))
    _print_dump(outcome)
    return outcome.exit_code


def _print_dump(outcome: DumpOutcome) -> None:
    for path in outcome.foreign:
        print(f"warning: {path} was not written by the recorder; left out of the dump")
    ranks = ", ".join(f"rank {rank}: {count}" for rank, count in sorted(outcome.records.items()))
    print(f"dump in {outcome.directory}: records {ranks or 'none (no module ran)'}")


def _compare(words: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ascendify compare", usage=USAGE, epilog=EPILOG)
    parser.add_argument("a", type=Path, help="the reference dump (e.g. the GPU or CPU run)")
    parser.add_argument("b", type=Path, help="the dump to check (e.g. the NPU run)")
    parser.add_argument("-o", "--output", type=Path, help="folder for compare.csv, .xlsx, .html")
    _add_compare_options(parser)
    args = parser.parse_args(words)
    return _judge_and_report(args.a, args.b, args.tolerance, args.output)


def _judge_and_report(a: Path, b: Path, tolerance: str, out: Path | None) -> int:
    from ascendify.compare.report import first_divergence_line, print_table, write_reports
    from ascendify.compare.session import compare_dumps

    comparison = compare_dumps(a, b, tolerance)
    print_table(comparison)
    line = first_divergence_line(comparison)
    print(line or "no divergence: every record within tolerance")
    for note in comparison.notes:
        print(note)
    if out is not None:
        written = write_reports(comparison, out)
        print("reports: " + ", ".join(str(path) for path in written))
    return 1 if comparison.failed else 0


def _run(words: list[str]) -> int:
    from ascendify.compare.session import dump_program
    from ascendify.errors import AscendifyError

    parser = argparse.ArgumentParser(prog="ascendify compare run")
    parser.add_argument("--a", required=True, metavar="CMD_A", help="the reference command, quoted")
    parser.add_argument("--b", required=True, metavar="CMD_B", help="the command to check, quoted")
    parser.add_argument("-o", "--output", type=Path, default=Path("compare-run"),
                        help="folder for both dumps (a/, b/) and the reports (default %(default)s)")  # fmt: skip
    _add_dump_options(parser)
    _add_compare_options(parser)
    args = parser.parse_args(words)
    settings = _settings(args)
    for side, command in (("a", args.a), ("b", args.b)):
        outcome = dump_program(shlex.split(command), args.output / side, settings)
        _print_dump(outcome)
        if outcome.exit_code != 0:
            raise AscendifyError(f"--{side} {command!r} failed (exit code {outcome.exit_code})")
    return _judge_and_report(args.output / "a", args.output / "b", args.tolerance, args.output)
