"""``ascendify compare``: record a program's module calls without editing it, and find where two runs part."""

from __future__ import annotations

import argparse
import shlex
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ascendify.errors import AscendifyError

if TYPE_CHECKING:
    from ascendify.compare.loss import LossCurve
    from ascendify.compare.session import DumpOutcome
    from ascendify.compare.settings import DumpSettings

NAME = "compare"
HELP = (
    "Find where two runs' numbers part: 'compare dump -o DIR -- python train.py' records every "
    "module call, 'compare A B' names the first divergence, 'compare run --a CMD --b CMD' does both."
)
USAGE = """\
ascendify compare dump -o DIR [--steps N] [--level stats|tensors|api] [--modules REGEX]
                       [--apis REGEX] [--backward] [--step-on auto|optimizer|forward]
                       [--max-elements N] [--nan-check] [--stop-after STEPS]
                       [--format ascendify|msprobe] -- CMD ARGS...
ascendify compare A B [-o OUT] [--tolerance auto|strict|msprobe|bf16|fp16]  (A, B: ascendify
                      or msprobe dumps)
ascendify compare run --a "CMD_A" --b "CMD_B" [-o OUT] [dump and tolerance options]
ascendify compare loss A B [--rank R] [--max-mean-rel 0.02] [--max-rel F] [-o OUT] [--json]"""
EPILOG = (
    "Exit codes: 0 every record within tolerance, 1 a divergence, 2 bad input (a missing dump "
    "file, dumps of different programs). 'compare dump' exits with the command's own code. "
    "'compare loss' exits 0 when the loss curves agree by the 2 % rule, 1 when they differ."
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
        help="tensors: also a strided sample of each tensor; api: also every torch operator "
        "call (torch functions, tensor methods, torch.nn.functional) inside its module",
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
    add("--format", choices=("ascendify", "msprobe"), default="ascendify",
        help="msprobe: also write msprobe's step<S>/rank<R>/dump.json layout, for its compare "
        "and visualiser")  # fmt: skip
    add("--apis", metavar="REGEX",
        help="--level api: record only operators whose name this expression finds")  # fmt: skip
    add("--nan-check", action="store_true",
        help="stop at the first operator whose output holds a NaN or inf, on any rank, at any "
        "step; name it, its module, rank, step and line")  # fmt: skip
    add("--stop-after", type=int, default=defaults.stop_after, metavar="STEPS",
        help="end the program cleanly (exit 0) once STEPS steps ended; 0: run to its end")  # fmt: skip


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
        args.steps,
        args.level,
        args.modules,
        args.backward,
        args.step_on,
        args.max_elements,
        args.stop_after,
        args.apis,
        args.nan_check,
    ).check()


def run(args: argparse.Namespace) -> int:
    words: list[str] = list(args.words)
    form = words.pop(0) if words[:1] in (["dump"], ["run"], ["loss"]) else None
    if args.tolerance is not None:
        words[:0] = ["--tolerance", args.tolerance]
    if args.output is not None:
        words[:0] = ["-o", args.output]
    if form == "dump":
        return _dump(words)
    if form == "run":
        return _run(words)
    if form == "loss":
        return _loss(words)
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
    outcome = dump_program(command, args.output, _settings(args), args.format)
    _print_dump(outcome)
    return outcome.exit_code


def _print_dump(outcome: DumpOutcome) -> None:
    for path in outcome.foreign:
        print(f"warning: {path} was not written by the recorder; left out of the dump")
    if outcome.nan_check is not None:
        print(f"first NaN/inf: {outcome.nan_check.get('message', '')}")
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


def _loss(words: list[str]) -> int:
    import json

    from ascendify.compare.loss import DEFAULT_MAX_MEAN_REL, judge_losses, verdict_lines
    from ascendify.compare.report import write_loss_report

    parser = argparse.ArgumentParser(
        prog="ascendify compare loss",
        description="Judge two runs' loss curves: the mean relative error over the steps both "
        "have, against a limit (2 %% by default, the rule ports are accepted by). A and B: a "
        "compare dump folder, a job id, a 'job metrics --csv' file, or a log.",
    )
    parser.add_argument("a", help="the reference run")
    parser.add_argument("b", help="the run to check")
    parser.add_argument("--rank", type=int, default=0, help="whose loss (default %(default)s)")
    parser.add_argument("--max-mean-rel", type=float, default=DEFAULT_MAX_MEAN_REL,
                        help="limit of the mean relative error (default %(default)s)")  # fmt: skip
    parser.add_argument("--max-rel", type=float, help="limit of any one step's relative error")
    parser.add_argument("--jobs-dir", type=Path, help="the job store, for job ids")
    parser.add_argument("-o", "--output", type=Path, help="folder for loss.csv and loss.html")
    parser.add_argument("--json", action="store_true", help="the verdict as JSON")
    args = parser.parse_args(words)
    a, b = (_loss_curve(name, args.rank, args.jobs_dir) for name in (args.a, args.b))
    verdict = judge_losses(a, b, args.max_mean_rel, args.max_rel)
    if args.json:
        worst, past = verdict.worst, verdict.first_past
        print(json.dumps({
            "a": a.source, "b": b.source, "steps": len(verdict.errors),
            "mean_relative_error": verdict.mean_relative,
            "max_relative_error": worst.relative if worst else None,
            "max_at_step": worst.step if worst else None,
            "first_step_past": past.step if past else None,
            "passed": verdict.passed,
        }))  # fmt: skip
    else:
        print("\n".join(verdict_lines(verdict)))
    if args.output is not None:
        written = write_loss_report(verdict, args.output)
        print("reports: " + ", ".join(str(path) for path in written))
    return 0 if verdict.passed else 1


def _loss_curve(name: str, rank: int, jobs_dir: Path | None) -> LossCurve:
    """A path as it is; else a job id in the store, read from its metrics file."""
    from ascendify.compare.loss import read_curve

    path = Path(name)
    if path.exists():
        return read_curve(path, rank)
    from ascendify.jobs.layout import JobLayout
    from ascendify.jobs.store import JobStore, default_dir

    store_dir = jobs_dir or default_dir()
    if not store_dir.is_dir():
        raise AscendifyError(f"{name}: no such file, folder or job")
    store = JobStore(store_dir)
    job = store.get(name)
    curve = read_curve(JobLayout(store.job_dir(job.id), job.id).metrics, rank)
    return replace(curve, source=f"job {job.id} ({job.name})")
