"""``torch.cuda`` APIs: renamed to torch_npu by qualified name, or reported when torch_npu lacks them."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascendify.migrate._rule import Context, Edit, Finding, Operation, Rule, checks
from ascendify.migrate.rules._api import api_family, rule_for
from ascendify.source import is_suppressed
from ascendify.targets import Safety, match_api
from ascendify.targets.values import NPU_DEVICE_PROPERTIES, PROPERTIES_LACK, value_difference

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


class KeptValue(Rule):
    """What it does: where the NPU counterpart of a ``torch.cuda`` API returns another kind of value
    (the value-semantics table, :mod:`ascendify.targets.values`), makes the read keep working:
    ``torch.cuda.get_device_capability()`` (None on NPU unless ``TORCH_NPU_DEVICE_CAPABILITY`` is
    set) is read as ``(... or (0, 0))``, and ``.major``/``.minor`` of the device properties (which
    NPU properties lack) as ``getattr(..., "major", 0)``.

    Why: ``torch_npu.npu.get_device_capability(0)[0] >= 8`` raises TypeError where the original ran;
    the stand-in is the value of a device older than any feature check asks for, so the code takes
    the path it takes on such a GPU.

    Example: ``if torch.cuda.get_device_capability(0)[0] >= 8:`` becomes
    ``if (torch_npu.npu.get_device_capability(0) or (0, 0))[0] >= 8:``.

    Fix safety: unsafe: the branch for older devices is taken; set ``TORCH_NPU_DEVICE_CAPABILITY``
    or edit the check if the NPU should take the other.
    """

    code = "NPU105"
    name = "kept-value"
    summary = "read of a torch.cuda result whose NPU value differs, kept running"
    safety = Safety.UNSAFE
    triggers = (b"get_device_capability", b"get_device_properties")


@checks(ast.Call, rules=(KeptValue,))
def check_kept_value(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    if isinstance(parent, ast.Expr):
        return  # the value is not read
    qualified = ctx.names.qualified_name(node.func)
    entry = None if qualified is None else value_difference(qualified, None)
    if entry is not None and _renamed(ctx, node, entry.cuda):
        edit = ctx.wrap(node, "(", f" or {entry.stand_in})")
        message = f"{qualified}(): {entry.differs}; {entry.stand_in} stands in for it"
        yield KeptValue.finding(node, message, edit)


def _renamed(ctx: Context, call: ast.Call, qualified: str) -> bool:
    """Whether the run renames the call to its NPU counterpart (else its value is CUDA's own)."""
    match = match_api(qualified, ctx.facts)
    rename = (
        None
        if match is None or match.npu_name is None
        else rule_for(qualified, match.target.safety)
    )
    lines = {call.lineno, call.end_lineno or call.lineno}
    return rename in ctx.rules and not is_suppressed(ctx.source, lines, rename.code)


_PROPERTY_CALLS = frozenset({"torch.cuda.get_device_properties"})


class DevicePropertyField(Rule):
    """What it does: reports reading a field that NPU device properties do not have, such as
    ``torch.cuda.get_device_properties(0).multi_processor_count`` (``.major`` and ``.minor`` are
    kept running by NPU105).

    Why: on NPU the properties carry only ``name``, ``total_memory``, ``L2_cache_size``,
    ``cube_core_num`` and ``vector_core_num``; other fields raise ``AttributeError``.

    Example: ``blocks = torch.cuda.get_device_properties(0).multi_processor_count`` is reported;
    the call itself is rewritten by NPU101.

    Fix safety: report only.
    """

    code = "NPU104"
    name = "device-property-field"
    summary = "device property that NPU devices do not report"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    triggers = (b"get_device_properties",)


@checks(ast.Attribute, rules=(DevicePropertyField, KeptValue))
def check_property_field(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Attribute)
    call = node.value
    if not (
        isinstance(call, ast.Call)
        and isinstance(node.ctx, ast.Load)
        and node.attr not in NPU_DEVICE_PROPERTIES
        and ctx.names.qualified_name(call.func) in _PROPERTY_CALLS
    ):
        return
    entry = value_difference("torch.cuda.get_device_properties", node.attr)
    if entry is None or not _renamed(ctx, call, entry.cuda):
        yield DevicePropertyField.finding(
            node, f"device properties have no field {node.attr!r} on NPU: {PROPERTIES_LACK}"
        )
        return
    start, end = ctx.span(call)
    before = "getattr("
    text = f'{before}{ctx.source.text[start:end]}, "{node.attr}", {entry.stand_in})'
    edit = Edit(*ctx.span(node), text, ((start, end, len(before)),))
    message = f".{node.attr} of the device properties: {entry.differs}; {entry.stand_in} stands in"
    yield KeptValue.finding(node, message, edit)
