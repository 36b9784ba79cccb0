"""Classify a raw operator trace against one torch_npu release (pure: no torch, no processes).

An operator executed on the CPU here would, on the NPU, either hit an NPU kernel, decompose through a composite
registration torch provides for every device, or fall back to the CPU (torch_npu prints a warning per operator, or
fails under ``TORCH_NPU_FALLBACK_CPU_DISABLE=1``). Some ran only because this host is a CPU
(:data:`CPU_HOST_VARIANTS`): on the NPU the operator they stand for runs instead.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from ascendify.analyze.findings import Finding
from ascendify.analyze.report import CsvTable
from ascendify.tabular import Row
from ascendify.targets.facts import TorchNpuFacts

DOUBLE_DTYPES = frozenset({"float64", "complex128"})
OUTSIDE_PROJECT = "(outside the project)"


class OpStatus(str, Enum):
    NPU_KERNEL = "npu-kernel"
    COMPOSITE = "composite"  # decomposes into other operators on any device
    VIA_OUT_VARIANT = (
        "via-out-variant"  # functional wrapper around an out= overload that has an NPU kernel
    )
    CPU_HOST_ONLY = "cpu-host-only"  # ran only because this host is a CPU: see CPU_HOST_VARIANTS
    CPU_FALLBACK = "cpu-fallback"


# Operators a CPU runs in place of the one the script called, which on the NPU is dispatched itself
# (CPU variant -> that operator). torch 2.13 names its CPU kernels *_for_cpu (a test keeps this
# table in step with torch's list); torch.nn.LSTM runs oneDNN's layer on a CPU. A variant whose
# operator has an NPU kernel in the chosen release is left out of the verdict.
CPU_HOST_VARIANTS: dict[str, str] = {
    "_scaled_dot_product_flash_attention_for_cpu": "scaled_dot_product_attention",
    "_scaled_dot_product_flash_attention_for_cpu_backward": "scaled_dot_product_attention",
    "_weight_int4pack_mm_for_cpu": "_weight_int4pack_mm",
    "_convert_weight_to_int4pack_for_cpu": "_convert_weight_to_int4pack",
    "mkldnn_rnn_layer": "lstm.input",
    "mkldnn_rnn_layer_backward": "lstm.input",
}


@dataclass
class OpUsage:
    """Everything the trace saw of one operator overload."""

    name: str  # "aten::addmm" or "aten::add.Tensor"
    status: OpStatus = OpStatus.NPU_KERNEL
    calls: int = 0
    dtypes: set[str] = field(default_factory=set)
    locations: dict[tuple[str, int], int] = field(default_factory=dict)


def op_status(name: str, composite_keys: list[str], facts: TorchNpuFacts) -> OpStatus:
    namespace, _, overload = name.partition("::")
    if namespace == "aten" and facts.has_npu_kernel(overload):
        return OpStatus.NPU_KERNEL
    if namespace == "aten" and facts.has_npu_kernel(CPU_HOST_VARIANTS.get(overload, "")):
        return OpStatus.CPU_HOST_ONLY
    if (
        "CompositeImplicitAutograd" in composite_keys
        or "CompositeExplicitAutograd" in composite_keys
    ):
        return OpStatus.COMPOSITE
    if namespace == "aten" and "CompositeExplicitAutogradNonFunctional" in composite_keys:
        base = overload.partition(".")[0]
        if any(op.partition(".")[0] == base for op in facts.aten_ops_with_npu_kernel):
            return OpStatus.VIA_OUT_VARIANT
    return OpStatus.CPU_FALLBACK


def summarize(trace: dict[str, Any], facts: TorchNpuFacts) -> dict[str, OpUsage]:
    """Fold the raw records into one usage per operator, classified for ``facts``."""
    root = Path(trace["project_root"])
    usages: dict[str, OpUsage] = {}
    for record in trace["records"]:
        name = record["op"]
        usage = usages.get(name)
        if usage is None:
            status = op_status(name, trace["kernels"].get(name, []), facts)
            usage = usages[name] = OpUsage(name, status)
        usage.calls += record["calls"]
        usage.dtypes.update(record["dtypes"])
        location = (_relative(record["file"], root), record["line"])
        usage.locations[location] = usage.locations.get(location, 0) + record["calls"]
    return usages


def trace_findings(
    trace: dict[str, Any], usages: dict[str, OpUsage], facts: TorchNpuFacts
) -> list[Finding]:
    findings = [
        Finding(
            file,
            line,
            line,
            usage.name,
            f"no NPU kernel in torch_npu {facts.version}: runs on the CPU (torch_npu falls back, or "
            f"fails with TORCH_NPU_FALLBACK_CPU_DISABLE=1); {calls} call(s), dtypes "
            f"{', '.join(sorted(usage.dtypes)) or '-'}",
            "AN201",
        )
        for usage in usages.values()
        if usage.status is OpStatus.CPU_FALLBACK
        for (file, line), calls in sorted(usage.locations.items())
    ]
    return findings + _double_findings(trace)


def _double_findings(trace: dict[str, Any]) -> list[Finding]:
    root = Path(trace["project_root"])
    ops_by_line: dict[tuple[str, int], dict[str, int]] = defaultdict(dict)
    for record in trace["records"]:
        if DOUBLE_DTYPES.intersection(record["dtypes"]):
            location = (_relative(record["file"], root), record["line"])
            ops = ops_by_line[location]
            ops[record["op"]] = ops.get(record["op"], 0) + record["calls"]
    return [
        Finding(
            file,
            line,
            line,
            ", ".join(sorted(ops)),
            f"float64 tensors reach {sum(ops.values())} operator call(s); most NPU kernels have no "
            "double support (DT_DOUBLE errors): use float32 unless the precision is needed",
            "AN202",
        )
        for (file, line), ops in sorted(ops_by_line.items())
    ]


def coverage_table(usages: dict[str, OpUsage]) -> CsvTable:
    """``op_coverage.csv``: every executed operator, fallbacks first."""
    order = list(OpStatus)
    rows: list[Row] = []
    for usage in sorted(usages.values(), key=lambda u: (-order.index(u.status), u.name)):
        (file, line), _ = max(usage.locations.items(), key=lambda item: item[1])
        rows.append(
            (
                usage.name,
                usage.status.value,
                usage.calls,
                ", ".join(sorted(usage.dtypes)),
                f"{file}:{line}" if line else file,
            )
        )
    return ("Op", "Status", "Calls", "Dtypes", "Main Location"), rows


def _relative(file: str, root: Path) -> str:
    if not file:
        return OUTSIDE_PROJECT
    return Path(os.path.relpath(file, root)).as_posix()
