"""``ascendify analyze --trace``: run a script here, then say which of its operators the NPU lacks.

The script runs in a child interpreter (:mod:`ascendify.analyze.tracer`) so that its imports, ``sys.argv``,
exit and crashes stay its own; the parent needs no torch and classifies the raw trace for the requested
torch_npu version.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ascendify._autostart import child_environment
from ascendify.analyze.coverage import (
    CPU_HOST_VARIANTS,
    OpStatus,
    coverage_table,
    summarize,
    trace_findings,
)
from ascendify.analyze.report import AnalysisResult
from ascendify.errors import AscendifyError
from ascendify.targets.facts import load_facts


@dataclass(frozen=True)
class TraceRequest:
    command: list[str]  # "python script.py args..." or "python -m package args..."
    version: str | None = None
    max_ops: int | None = None
    max_seconds: float | None = None


# Interpreter options passed through to the child (they apply to the whole run), and those taking a value.
_INTERPRETER_FLAGS = frozenset({"-u", "-O", "-OO", "-B", "-b", "-bb", "-E", "-s", "-d", "-v", "-q"})
_INTERPRETER_OPTIONS_WITH_VALUE = frozenset({"-X", "-W"})


def child_command(request: TraceRequest, trace_out: Path) -> list[str]:
    """The user's interpreter (and its options), running our tracer in front of the user's script."""
    if not request.command or not Path(request.command[0]).name.startswith("python"):
        raise AscendifyError(
            "the traced command must start with a Python interpreter, e.g. "
            "'-- python train.py --epochs 1' or '-- python -m package.train'"
        )
    interpreter, options, target = _split_interpreter_options(request.command)
    if not target or (target[0] == "-m" and len(target) < 2):
        raise AscendifyError("nothing to run after the interpreter: give script.py or -m module")
    limits: list[str] = []
    if request.max_ops is not None:
        limits += ["--max-ops", str(request.max_ops)]
    if request.max_seconds is not None:
        limits += ["--max-seconds", str(request.max_seconds)]
    tracer = ["-m", "ascendify.analyze.tracer", "--trace-out", str(trace_out), *limits, "--"]
    return [interpreter, *options, *tracer, *target]


def _split_interpreter_options(command: list[str]) -> tuple[str, list[str], list[str]]:
    interpreter, *rest = command
    options: list[str] = []
    while rest and rest[0] != "-m" and rest[0].startswith("-"):
        option = rest.pop(0)
        if option in _INTERPRETER_FLAGS:
            options.append(option)
        elif option in _INTERPRETER_OPTIONS_WITH_VALUE and rest:
            options += [option, rest.pop(0)]
        else:
            raise AscendifyError(f"interpreter option {option!r} is not supported by --trace")
    return interpreter, options, rest


def read_trace(path: Path, returncode: int) -> dict[str, Any]:
    """The trace the tracer wrote as it went (:class:`ascendify.analyze.tracer.TraceWriter`), folded into one
    document. Without its last line the script left without the tracer (``os._exit``, a signal): what it ran
    until then is kept, and ``stopped`` says so."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    entries = [
        json.loads(line) for line in lines if line.endswith("}")
    ]  # a line cut short is left out
    if not entries or "start" not in entries[0]:
        raise AscendifyError(
            f"the traced script ended (exit code {returncode}) without a trace; "
            "was the interpreter killed?"
        )
    trace: dict[str, Any] = {**entries[0]["start"], "kernels": {}, "total_ops": 0, "seconds": 0.0}
    records: list[dict[str, Any]] = []
    end = {
        "stopped": "the script left without the tracer's end (os._exit or a signal)",
        "exit_code": returncode,
        "error": None,
    }
    for entry in entries[1:]:
        if "op" in entry:
            trace["kernels"][entry["op"]] = entry["kernels"]
        elif "record" in entry:
            op, dtypes, file, line = entry["record"]
            records.append({"op": op, "dtypes": dtypes, "file": file, "line": line, "calls": 1})
        elif "calls" in entry:
            for index, calls in entry["calls"]:
                records[index]["calls"] = calls
            trace.update(total_ops=entry["total"], seconds=entry["seconds"])
        elif "end" in entry:
            end = entry["end"]
    trace["total_ops"] = max(trace["total_ops"], sum(record["calls"] for record in records))
    return {**trace, **end, "records": records}


def run_trace(request: TraceRequest) -> AnalysisResult:
    facts = load_facts(request.version)  # a bad -v fails before the script runs
    with tempfile.TemporaryDirectory(prefix="ascendify-trace-") as scratch:
        trace_out = Path(scratch) / "trace.json"
        completed = subprocess.run(
            child_command(request, trace_out), env=child_environment(), check=False
        )
        trace = read_trace(trace_out, completed.returncode)
    usages = summarize(trace, facts)
    findings = trace_findings(trace, usages, facts)
    fallbacks = sorted(
        name for name, usage in usages.items() if usage.status is OpStatus.CPU_FALLBACK
    )
    host_only = {
        name: CPU_HOST_VARIANTS[name.partition("::")[2]]
        for name, usage in sorted(usages.items())
        if usage.status is OpStatus.CPU_HOST_ONLY
    }
    details = {
        "trace": {
            "command": request.command,
            "seconds": trace["seconds"],
            "total_ops": trace["total_ops"],
            "distinct_ops": len(usages),
            "stopped": trace["stopped"],
            "exit_code": trace["exit_code"],
            "error": trace["error"],
            "runtime_redirect": trace["runtime_redirect"],
            "torch_version": trace["torch_version"],
            "cpu_fallback_ops": fallbacks,
            "cpu_host_only_ops": host_only,  # -> the operator the NPU runs in its place
        },
        "ops": {
            name: {
                "status": usage.status.value,
                "calls": usage.calls,
                "dtypes": sorted(usage.dtypes),
            }
            for name, usage in sorted(usages.items())
        },
    }
    return AnalysisResult(
        mode="trace",
        torch_npu_version=facts.version,
        findings=findings,
        details=details,
        tables={"op_coverage.csv": coverage_table(usages)},
    )
