"""Legacy typed tensors: ``torch.cuda.FloatTensor`` and friends, as names and as type strings."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from ascendify.migrate._rule import Context, Finding, Rule, checks
from ascendify.migrate.rules._api import api_family
from ascendify.migrate.rules._literals import literal_edit
from ascendify.targets import Safety

_SCALARS = ("Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Char", "Byte", "Bool")
_TYPE_NAMES = tuple(f"{scalar}{kind}" for scalar in _SCALARS for kind in ("Tensor", "Storage"))
_TYPE_STRING = re.compile(r"torch\.cuda\.(\w+(?:Tensor|Storage))")


class LegacyTensorType(Rule):
    """What it does: rewrites legacy typed tensor and storage classes such as
    ``torch.cuda.FloatTensor`` and ``torch.cuda.LongTensor`` to ``torch_npu.npu.*``.

    Why: the CUDA classes allocate on a CUDA device.

    Example: ``x = torch.cuda.FloatTensor(4, 4)`` becomes ``x = torch_npu.npu.FloatTensor(4, 4)``.

    Fix safety: safe.
    """

    code = "NPU111"
    name = "legacy-tensor-type"
    summary = "torch.cuda.<Type>Tensor -> torch_npu.npu.<Type>Tensor"
    safety = Safety.SAFE
    triggers = (b"cuda",)


class LegacyDoubleTensor(Rule):
    """What it does: rewrites ``torch.cuda.DoubleTensor`` (and ``DoubleStorage`` where torch_npu
    has it) to ``torch_npu.npu.DoubleTensor``.

    Why: the CUDA class allocates on a CUDA device. Unlike torch_npu's runtime redirect, which
    silently turns it into ``FloatTensor``, the precision is kept.

    Example: ``torch.cuda.DoubleTensor(3)`` becomes ``torch_npu.npu.DoubleTensor(3)``.

    Fix safety: unsafe: float64 has few NPU kernels, so operators may fall back to the CPU or fail.
    """

    code = "NPU112"
    name = "legacy-double-tensor"
    summary = "torch.cuda.DoubleTensor -> torch_npu.npu.DoubleTensor (float64 on NPU)"
    safety = Safety.UNSAFE
    triggers = (b"cuda",)


class LegacyTypeString(Rule):
    """What it does: rewrites type-name strings ``"torch.cuda.FloatTensor"`` (as passed to
    ``Tensor.type(...)`` or ``torch.set_default_tensor_type(...)``, or compared with
    ``x.type()``) to ``"torch.npu.FloatTensor"`` when torch_npu has the type.

    Why: the string names a CUDA tensor type; after ``import torch_npu`` the NPU types are
    registered under ``torch.npu``.

    Example: ``x = x.type("torch.cuda.HalfTensor")`` becomes ``x = x.type("torch.npu.HalfTensor")``.

    Fix safety: safe. Only strings that are exactly such a type name are touched.
    """

    code = "NPU113"
    name = "legacy-type-string"
    summary = '"torch.cuda.<Type>Tensor" type string -> "torch.npu.<Type>Tensor"'
    safety = Safety.SAFE
    triggers = (b"torch.cuda.",)


api_family(
    tuple(f"torch.cuda.{name}" for name in _TYPE_NAMES),
    {Safety.SAFE: LegacyTensorType, Safety.UNSAFE: LegacyDoubleTensor},
)


@checks(ast.Constant, rules=(LegacyTypeString,))
def check_type_string(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Constant)
    if not isinstance(node.value, str) or not node.value.startswith("torch.cuda."):
        return
    match = _TYPE_STRING.fullmatch(node.value)
    if match is None or not ctx.facts.has(f"torch_npu.npu.{match.group(1)}"):
        return
    edited = literal_edit(ctx, node, lambda value: value.replace("torch.cuda.", "torch.npu.", 1))
    if edited is not None:
        old, new, edit = edited
        yield LegacyTypeString.finding(node, f"{old!r} -> {new!r}", edit)
