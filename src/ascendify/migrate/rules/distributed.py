"""Distributed training: the NCCL backend becomes HCCL; DataParallel is reported."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from ascendify.migrate._modes import EVERY_TARGET
from ascendify.migrate._rule import Context, Edit, Finding, Operation, Rule, checks
from ascendify.migrate.rules._api import api_family
from ascendify.migrate.rules._literals import Parameter, SlotKind, slot_kind
from ascendify.targets import Safety
from ascendify.targets.devices import (
    BACKEND_NAMES,
    BACKEND_PARAMETERS,
    CUDA_DEVICE_TYPE,
    NPU_DEVICE_TYPE,
)


class NcclBackend(Rule):
    """What it does: rewrites the NCCL backend name to HCCL where a communication backend is
    named: ``init_process_group``/``new_group``/``new_subgroups`` (positional or ``backend=``),
    any ``backend=`` keyword, variables and keys named like ``backend``, parameter defaults,
    argparse ``--backend``/``--dist-backend`` defaults and choices, and comparisons with them
    (``dist.get_backend() == "nccl"``). Device-qualified specs are mapped part by part:
    ``"cuda:nccl,cpu:gloo"`` becomes ``"npu:hccl,cpu:gloo"``.

    Why: NCCL does not exist on Ascend; HCCL is its collective communication library.

    Example: ``dist.init_process_group(backend="nccl")`` becomes
    ``dist.init_process_group(backend="hccl")``.

    Fix safety: safe.
    """

    code = "NPU401"
    name = "nccl-backend"
    summary = "NCCL backend name -> hccl"
    safety = Safety.SAFE
    triggers = (b"nccl", b"NCCL")


class BackendTable(Rule):
    """What it does: adds an NPU entry to a table from device type to backend:
    ``{"cuda": "nccl", "cpu": "gloo"}`` becomes ``{"npu": "hccl", "cuda": "nccl", "cpu": "gloo"}``.

    Why: code that looks the backend up by device type (``backends[device.type]``) would find no
    ``"npu"`` key, or fall back to gloo silently. The CUDA entry stays for CUDA hosts.

    Example: ``BACKENDS = {"cuda": "nccl"}`` becomes ``BACKENDS = {"npu": "hccl", "cuda": "nccl"}``.

    Fix safety: safe.
    """

    code = "NPU405"
    name = "backend-table"
    summary = "device type -> backend table gains the npu -> hccl entry"
    safety = Safety.SAFE
    targets = EVERY_TARGET
    triggers = (b"nccl",)


@checks(ast.Dict, rules=(BackendTable,))
def check_backend_table(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Dict)
    entries = {
        key.value: value
        for key, value in zip(node.keys, node.values, strict=True)
        if isinstance(key, ast.Constant) and isinstance(key.value, str)
    }
    cuda = entries.get(CUDA_DEVICE_TYPE)
    if NPU_DEVICE_TYPE in entries or not (
        isinstance(cuda, ast.Constant)
        and isinstance(cuda.value, str)
        and cuda.value in BACKEND_NAMES
    ):
        return
    key = next(k for k in node.keys if isinstance(k, ast.Constant) and k.value == CUDA_DEVICE_TYPE)
    quote = ctx.segment(key)[0]
    npu_backend = BACKEND_NAMES[cuda.value]
    text = f"{quote}{NPU_DEVICE_TYPE}{quote}: {quote}{npu_backend}{quote}, "
    start, _ = ctx.span(key)
    yield BackendTable.finding(
        node, f"backend table gains {text.rstrip(', ')}", Edit(start, start, text)
    )


class DistributedApi(Rule):
    """What it does: rewrites distributed helpers named after NCCL, e.g.
    ``torch.distributed.is_nccl_available()`` becomes ``torch_npu.distributed.is_hccl_available()``.

    Why: the NCCL check is always false on an Ascend host, so code would take its non-NCCL path.

    Example: ``if dist.is_nccl_available():`` becomes
    ``if torch_npu.distributed.is_hccl_available():``.

    Fix safety: safe.
    """

    code = "NPU402"
    name = "distributed-api"
    summary = "NCCL-named distributed API -> torch_npu.distributed"
    safety = Safety.SAFE
    triggers = (b"nccl",)


class DataParallel(Rule):
    """What it does: reports ``torch.nn.DataParallel`` and ``torch.nn.parallel.data_parallel``.

    Why: single-process multi-device data parallelism is not supported on NPU.

    Example: ``model = nn.DataParallel(model)`` is reported: use one process per device with
    ``torch.nn.parallel.DistributedDataParallel`` (``ascendify run`` starts them).

    Fix safety: report only.
    """

    code = "NPU403"
    name = "data-parallel"
    summary = "DataParallel is not supported on NPU (left in place)"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    triggers = (b"DataParallel", b"data_parallel")


class DistributedUnsupported(Rule):
    """What it does: reports distributed APIs bound to NCCL, such as
    ``torch.distributed.ProcessGroupNCCL``.

    Why: NCCL process groups cannot be created on an Ascend host; torch_npu provides an HCCL
    process group instead.

    Example: ``opts = dist.ProcessGroupNCCL.Options()`` is reported.

    Fix safety: report only.
    """

    code = "NPU404"
    name = "distributed-unsupported"
    summary = "NCCL-bound distributed API (left in place)"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    triggers = (b"NCCL",)


api_family(
    ("torch.distributed",),
    {Safety.SAFE: DistributedApi, Safety.REPORT_ONLY: DistributedUnsupported},
)
api_family(
    ("torch.nn.DataParallel", "torch.nn.parallel.data_parallel"),
    {Safety.REPORT_ONLY: DataParallel},
)


def to_hccl(value: str) -> str | None:
    """``"nccl"`` -> ``"hccl"``; ``"cuda:nccl,cpu:gloo"`` -> ``"npu:hccl,cpu:gloo"``; else None."""
    if value in BACKEND_NAMES:
        return BACKEND_NAMES[value]
    parts = []
    for part in value.split(","):
        device, colon, backend = part.partition(":")
        if colon:
            device = NPU_DEVICE_TYPE if device == CUDA_DEVICE_TYPE else device
        else:
            backend = device
            device = ""
        backend = BACKEND_NAMES.get(backend, backend)
        parts.append(f"{device}:{backend}" if colon else backend)
    converted = ",".join(parts)
    return converted if converted != value else None


slot_kind(
    SlotKind(
        label="backend",
        holder=re.compile(r"(?:^|_)backend$", re.I),
        keywords=frozenset({"backend", "dist_backend"}),
        convert=to_hccl,
        argument_rule=NcclBackend,
        value_rule=NcclBackend,
        holder_calls=frozenset({"get_backend"}),
    ),
    {
        parameter.callable: Parameter(
            () if parameter.position is None else (parameter.position,), (parameter.keyword,)
        )
        for parameter in BACKEND_PARAMETERS
    },
)
