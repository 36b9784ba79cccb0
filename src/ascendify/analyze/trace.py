"""``ascendify analyze --trace``: run a script here, then say which of its operators the NPU lacks.

The script runs in a child interpreter (:mod:`ascendify.analyze.tracer`) so that its imports, ``sys.argv``,
exit and crashes stay its own; the parent needs no torch and classifies the raw trace for the requested
torch_npu version.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ascendify
from ascendify.analyze.coverage import OpStatus, coverage_table, summarize, trace_findings
from ascendify.analyze.report import AnalysisResult
from ascendify.errors import AscendifyError
from ascendify.targets.facts import load_facts


@dataclass(frozen=True)
class TraceRequest:
    command: list[str]  # "python script.py args..." or "python -m package args..."
    version: str | None = None
    max_ops: int | None = None
    max_seconds: float | None = None


def child_command(request: TraceRequest, trace_out: Path) -> list[str]:
    """The user's interpreter, running our tracer in front of the user's script."""
    if not request.command or not Path(request.command[0]).name.startswith("python"):
        raise AscendifyError(
            "the traced command must start with a Python interpreter, e.g. "
            "'-- python train.py --epochs 1' or '-- python -m package.train'"
        )
    interpreter, *target = request.command
    if not target or (target[0] == "-m" and len(target) < 2):
        raise AscendifyError("nothing to run after the interpreter: give script.py or -m module")
    if target[0].startswith("-") and target[0] != "-m":
        raise AscendifyError(f"interpreter option {target[0]!r} is not supported by --trace")
    limits: list[str] = []
    if request.max_ops is not None:
        limits += ["--max-ops", str(request.max_ops)]
    if request.max_seconds is not None:
        limits += ["--max-seconds", str(request.max_seconds)]
    return [
        interpreter,
        "-m",
        "ascendify.analyze.tracer",
        "--trace-out",
        str(trace_out),
        *limits,
        "--",
        *target,
    ]


def child_environment() -> dict[str, str]:
    """Our environment, with this ascendify importable by the user's interpreter."""
    env = dict(os.environ)
    package_parent = str(Path(ascendify.__file__).resolve().parents[1])
    paths = env.get("PYTHONPATH", "").split(os.pathsep) if env.get("PYTHONPATH") else []
    if package_parent not in paths:
        env["PYTHONPATH"] = os.pathsep.join([package_parent, *paths])
    return env


def run_trace(request: TraceRequest) -> AnalysisResult:
    facts = load_facts(request.version)  # a bad -v fails before the script runs
    with tempfile.TemporaryDirectory(prefix="ascendify-trace-") as scratch:
        trace_out = Path(scratch) / "trace.json"
        completed = subprocess.run(
            child_command(request, trace_out), env=child_environment(), check=False
        )
        if not trace_out.exists():
            raise AscendifyError(
                f"the traced script ended (exit code {completed.returncode}) without a trace; "
                "was the interpreter killed?"
            )
        trace: dict[str, Any] = json.loads(trace_out.read_text(encoding="utf-8"))
    usages = summarize(trace, facts)
    findings = trace_findings(trace, usages, facts)
    fallbacks = sorted(
        name for name, usage in usages.items() if usage.status is OpStatus.CPU_FALLBACK
    )
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
