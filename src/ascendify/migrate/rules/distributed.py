"""Distributed training: the NCCL backend becomes HCCL; DataParallel is reported."""

from __future__ import annotations

import re

from ascendify.migrate._rule import Operation, Rule
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
