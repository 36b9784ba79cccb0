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
    """What it does: names the NPU in calls whose device defaults to CUDA when none is given:
    ``torch.amp.GradScaler()`` gets ``device="npu"``, ``torch.random.fork_rng()`` gets
    ``device_type="npu"``.

    Why: without a device argument these APIs pick CUDA, so the scaler would be disabled and the
    forked RNG would not be the NPU's.

    Example: ``scaler = torch.amp.GradScaler(init_scale=1024)`` becomes
    ``scaler = torch.amp.GradScaler(init_scale=1024, device="npu")``.

    Fix safety: safe.
    """

    code = "NPU502"
    name = "amp-default-device"
    summary = "call whose device defaults to CUDA -> explicit npu"
    safety = Safety.SAFE
    triggers = (b"GradScaler", b"fork_rng")


api_family(
    ("torch.cuda.amp", "torch.get_autocast_gpu_dtype", "torch.set_autocast_gpu_dtype"),
    {Safety.SAFE: CudaAmp},
)


@checks(ast.Call, rules=(AmpDefaultDevice,))
def check_default_device(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    qualified = ctx.names.qualified_name(node.func)
    parameter = CUDA_DEFAULT_DEVICE_CALLS.get(qualified or "")
    if parameter is None:
        return
    keyword, position = parameter
    if len(node.args) > position or any(k.arg in (keyword, None) for k in node.keywords):
        return  # the device is given (or may be, through **kwargs)
    if any(isinstance(arg, ast.Starred) for arg in node.args):
        return
    text = f'{keyword}="{NPU_DEVICE_TYPE}"'
    arguments = [*node.args, *node.keywords]
    if arguments:
        at = max(ctx.span(argument)[1] for argument in arguments)
        edit = Edit(at, at, ", " + text)
    else:
        _, end = ctx.span(node)
        edit = Edit(end - 1, end - 1, text)  # just before the closing parenthesis
    yield AmpDefaultDevice.finding(node, f"{qualified}(...) -> {qualified}(..., {text})", edit)
