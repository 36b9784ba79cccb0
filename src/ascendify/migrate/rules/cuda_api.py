"""``torch.cuda`` APIs: renamed to torch_npu by qualified name, or reported when torch_npu lacks them."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascendify.migrate._rule import Context, Finding, Operation, Rule, checks
from ascendify.migrate.rules._api import api_family
from ascendify.targets import Safety

_TRIGGERS = (b"cuda", b"CUDA", b"Cuda")


class CudaApi(Rule):
    """What it does: rewrites a ``torch.cuda`` API to its ``torch_npu.npu`` counterpart, found by
    qualified name through any import alias (``import torch as th``, ``import torch.cuda as tc``,
    ``from torch import cuda``, ``CD = torch.cuda``).

    Why: the CUDA namespace does not drive an Ascend device; torch_npu mirrors it under
    ``torch_npu.npu`` (the same object as ``torch.npu`` once torch_npu is imported).

    Example::

        if torch.cuda.is_available():
            torch.cuda.set_device(rank)

    becomes::

        if torch_npu.npu.is_available():
            torch_npu.npu.set_device(rank)

    Fix safety: safe. Only names that the selected torch_npu release exports are emitted.
    """

    code = "NPU101"
    name = "cuda-api"
    summary = "torch.cuda API -> torch_npu.npu"
    safety = Safety.SAFE
    triggers = _TRIGGERS


class CudaApiCaveat(Rule):
    """What it does: rewrites a ``torch.cuda`` API whose NPU counterpart behaves differently, e.g.
    ``get_device_capability`` (a configured value, not a hardware fact) or
    ``CUDAPluggableAllocator`` (``NPUPluggableAllocator``, needs an allocator built for the NPU).

    Why: the call has an NPU spelling, but code that relies on its result may take another path.

    Example: ``torch.cuda.get_device_capability()`` becomes
    ``torch_npu.npu.get_device_capability()``.

    Fix safety: unsafe: applied and flagged in the change list with the difference.
    """

    code = "NPU102"
    name = "cuda-api-caveat"
    summary = "torch.cuda API -> torch_npu.npu counterpart that behaves differently"
    safety = Safety.UNSAFE
    triggers = _TRIGGERS


class CudaApiUnsupported(Rule):
    """What it does: reports a ``torch.cuda`` API that torch_npu does not offer (``nvtx``,
    ``comm.scatter``, ``memory_usage``, ``jiterator``, ...), with advice where there is one.

    Why: emitting ``torch.npu.nvtx`` would fail at run time; the user has to decide.

    Example: ``torch.cuda.nvtx.range_push("step")`` is left as it is and reported as UNSUPPORTED
    (torch_npu.npu.mstx offers markers for msprof).

    Fix safety: report only.
    """

    code = "NPU103"
    name = "cuda-api-unsupported"
    summary = "torch.cuda API without an NPU counterpart (left in place)"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    triggers = _TRIGGERS


# Also the catch-all (""): any mapped API that no more specific family claims.
api_family(("torch.cuda", ""), {Safety.SAFE: CudaApi, Safety.UNSAFE: CudaApiCaveat,
                                 Safety.REPORT_ONLY: CudaApiUnsupported})  # fmt: skip

# What torch_npu's device properties offer; anything else read from them fails on NPU.
_NPU_DEVICE_PROPERTIES = frozenset(
    {"name", "total_memory", "L2_cache_size", "cube_core_num", "vector_core_num"}
)
_PROPERTY_CALLS = frozenset({"torch.cuda.get_device_properties"})


class DevicePropertyField(Rule):
    """What it does: reports reading a field that NPU device properties do not have, such as
    ``torch.cuda.get_device_properties(0).major`` or ``.multi_processor_count``.

    Why: on NPU the properties carry only ``name``, ``total_memory``, ``L2_cache_size``,
    ``cube_core_num`` and ``vector_core_num``; other fields raise ``AttributeError``.

    Example: ``if torch.cuda.get_device_properties(0).major >= 8:`` is reported; the call itself
    is rewritten by NPU101.

    Fix safety: report only.
    """

    code = "NPU104"
    name = "device-property-field"
    summary = "device property that NPU devices do not report"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    triggers = (b"get_device_properties",)


@checks(ast.Attribute, rules=(DevicePropertyField,))
def check_property_field(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Attribute)
    call = node.value
    if (
        isinstance(call, ast.Call)
        and node.attr not in _NPU_DEVICE_PROPERTIES
        and ctx.names.qualified_name(call.func) in _PROPERTY_CALLS
    ):
        yield DevicePropertyField.finding(
            node, f"device properties have no field {node.attr!r} on NPU"
        )
