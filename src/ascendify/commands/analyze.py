"""``ascendify analyze``: what in a project the NPU cannot do as written, from its sources or from a real run."""

from __future__ import annotations

import argparse
from pathlib import Path

from ascendify._parallel import PARALLEL_FROM, default_jobs, jobs_option
from ascendify.targets.facts import version_help

NAME = "analyze"
HELP = (
    "Report unsupported APIs, CUDA-only libraries, custom CUDA operators, float64 use and the "
    "unsafe edits migrate would make (-i SRC), "
    "or run a script and report the operators without an NPU kernel (--trace -- python train.py ...)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-i", "--input", type=Path, help="project directory (or file) to analyse")
    parser.add_argument(
        "-o", "--output", type=Path, required=True, help="directory for the reports"
    )
    parser.add_argument(
        "-v",
        "--version",
        dest="npu_version",
        help=f"torch_npu release to check against: {version_help()}",
    )
    parser.add_argument(
        "-j", "--jobs", type=jobs_option, default=default_jobs(),
        help=f"worker processes for -i (default: the cores this process may use, %(default)s here); "
        f"fewer than {PARALLEL_FROM} files, or -j 1, run in-process",
    )  # fmt: skip
    parser.add_argument(
        "--trace", action="store_true", help="run the command after '--' and trace its operators"
    )
    parser.add_argument(
        "--max-ops", type=int, help="with --trace: stop the script after this many operator calls"
    )
    parser.add_argument(
        "--max-seconds", type=float, help="with --trace: stop the script after this many seconds"
    )
    parser.add_argument(
        "traced", nargs=argparse.REMAINDER, metavar="-- python script.py ARGS", help="with --trace"
    )


def run(args: argparse.Namespace) -> int:
    from ascendify.analyze.findings import blocking
    from ascendify.analyze.report import print_summary, write_reports
    from ascendify.analyze.unsafe import print_unsafe
    from ascendify.errors import AscendifyError

    command = args.traced[1:] if args.traced[:1] == ["--"] else args.traced
    if args.trace:
        if args.input is not None:
            raise AscendifyError("--trace runs a command; it takes no -i")
        from ascendify.analyze.trace import TraceRequest, run_trace

        result = run_trace(TraceRequest(command, args.npu_version, args.max_ops, args.max_seconds))
        script_failed = bool(result.details["trace"]["exit_code"])
    else:
        if args.input is None or command:
            raise AscendifyError("give -i SRC for static analysis, or --trace -- python script.py")
        from ascendify._fs import refuse_output_inside_input
        from ascendify.analyze.static import analyze_path
        from ascendify.analyze.unsafe import analyze_with_migration

        refuse_output_inside_input(args.input, args.output)
        if args.input.is_dir():  # with the unsafe edits migrate would make on it
            result = analyze_with_migration(args.input, args.npu_version, jobs=args.jobs)
        else:
            result = analyze_path(args.input, args.npu_version, jobs=args.jobs)
        script_failed = False
    write_reports(result, args.output)
    print_summary(result, args.output)
    print_unsafe(result.details, args.output / "report.json")
    trace = result.details.get("trace", {})
    if trace.get("cpu_host_only_ops"):
        ran_here = ", ".join(
            f"{op} ({npu_op})" for op, npu_op in trace["cpu_host_only_ops"].items()
        )
        print(
            "ran only because this host is a CPU, not part of the verdict (on the NPU the operator "
            f"in brackets runs instead, with an NPU kernel): {ran_here}"
        )
    if script_failed:
        print(f"the traced script failed (exit code {trace['exit_code']}): {trace['error'] or ''}")
    return 1 if blocking(result.findings) or script_failed else 0
