"""Automatic mixed precision: ``torch.cuda.amp`` and the CUDA defaults of ``torch.amp``."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascendify.migrate._rule import Context, Edit, Finding, Rule, checks
from ascendify.migrate.rules._api import api_family
from ascendify.targets import Safety
from ascendify.targets.devices import CUDA_DEFAULT_DEVICE_CALLS, NPU_DEVICE_TYPE


class CudaAmp(Rule):
    """What it does: moves ``torch.cuda.amp`` (``autocast``, ``GradScaler``, ``custom_fwd``,
    ``custom_bwd``) to ``torch_npu.npu.amp``, in imports (``from torch.cuda.amp import autocast``,
    ``from torch.cuda import amp``) and in qualified uses; maps
    ``torch.get/set_autocast_gpu_dtype`` to ``torch_npu.npu.get/set_autocast_dtype``.

    Why: CUDA autocast does nothing on an NPU; torch_npu's amp is the NPU one.

    Example: ``scaler = torch.cuda.amp.GradScaler()`` becomes
    ``scaler = torch_npu.npu.amp.GradScaler()``.

    Fix safety: safe. ``torch.autocast("cuda")`` and ``torch.amp`` device arguments are NPU301.
    """

    code = "NPU501"
    name = "cuda-amp"
    summary = "torch.cuda.amp -> torch_npu.npu.amp"
    safety = Safety.SAFE
    triggers = (b"cuda", b"autocast_gpu")


class AmpDefaultDevice(Rule):
    """What it does: adds the ``"npu"`` device to ``torch.amp`` calls that default to CUDA when no
    device is given, such as ``torch.amp.GradScaler()``.

    Why: without a device argument these APIs pick CUDA, so the scaler would be disabled on NPU.

    Example: ``scaler = torch.amp.GradScaler()`` becomes ``scaler = torch.amp.GradScaler("npu")``.

    Fix safety: safe.
    """

    code = "NPU502"
    name = "amp-default-device"
    summary = "torch.amp call defaulting to CUDA -> explicit npu"
    safety = Safety.SAFE
    triggers = (b"GradScaler",)


api_family(
    ("torch.cuda.amp", "torch.get_autocast_gpu_dtype", "torch.set_autocast_gpu_dtype"),
    {Safety.SAFE: CudaAmp},
)


@checks(ast.Call)
def check_default_device(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    qualified = ctx.names.qualified_name(node.func)
    keyword = CUDA_DEFAULT_DEVICE_CALLS.get(qualified or "")
    if keyword is None or node.args or any(k.arg in (keyword, None) for k in node.keywords):
        return
    text = f'"{NPU_DEVICE_TYPE}"'
    if node.keywords:
        at = ctx.span(node.keywords[0])[0]
        edit = Edit(at, at, text + ", ")
    else:
        _, end = ctx.span(node)
        edit = Edit(end - 1, end - 1, text)  # just before the closing parenthesis
    yield AmpDefaultDevice.finding(node, f"{qualified}() -> {qualified}({text})", edit)
