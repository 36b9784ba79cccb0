"""Profiling: torch_npu's profiler records NPU activity; NVTX has no NPU counterpart."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascendify.migrate._rule import Context, Finding, Operation, Rule, checks
from ascendify.migrate.rules._api import api_family
from ascendify.targets import Safety
from ascendify.targets.devices import NPU_DEVICE_TYPE, USE_CUDA_PROFILERS


class ProfilerApi(Rule):
    """What it does: moves ``torch.profiler.profile``, ``schedule``,
    ``tensorboard_trace_handler``, ``ProfilerAction`` and ``ProfilerActivity`` to
    ``torch_npu.profiler``, and ``ProfilerActivity.CUDA`` to
    ``torch_npu.profiler.ProfilerActivity.NPU``.

    Why: torch's profiler does not see NPU kernels; torch_npu's profiler does, with the same API.

    Example: ``activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]`` becomes
    ``activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU]``.

    Fix safety: safe.
    """

    code = "NPU601"
    name = "profiler-api"
    summary = "torch.profiler -> torch_npu.profiler (CUDA activity -> NPU)"
    safety = Safety.SAFE
    triggers = (b"profiler",)


class ProfilerUseCuda(Rule):
    """What it does: rewrites ``use_cuda=`` of the autograd profiler to ``use_device=``:
    ``use_cuda=True`` becomes ``use_device="npu"``, a variable ``flag`` becomes
    ``use_device="npu" if flag else None``.

    Why: ``use_cuda`` times CUDA kernels only; ``use_device`` names the accelerator to profile.

    Example: ``torch.autograd.profiler.profile(use_cuda=True)`` becomes
    ``torch.autograd.profiler.profile(use_device="npu")``.

    Fix safety: safe.
    """

    code = "NPU602"
    name = "profiler-use-cuda"
    summary = "autograd profiler use_cuda= -> use_device="
    safety = Safety.SAFE
    triggers = (b"use_cuda",)


class ProfilerUnsupported(Rule):
    """What it does: reports profiling helpers without an NPU counterpart
    (``torch.autograd.profiler.emit_nvtx``).

    Why: NVTX ranges are read by NVIDIA tools only.

    Example: ``with torch.autograd.profiler.emit_nvtx():`` is reported; use
    ``torch_npu.profiler`` (or ``torch_npu.npu.mstx`` markers).

    Fix safety: report only.
    """

    code = "NPU603"
    name = "profiler-unsupported"
    summary = "CUDA-only profiling helper (left in place)"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    triggers = (b"nvtx",)


class ProfilerExperimentalConfig(Rule):
    """What it does: reports ``experimental_config=`` passed to ``torch.profiler.profile`` (which
    the migration moves to ``torch_npu.profiler.profile``).

    Why: torch's experimental config describes CUDA (CUPTI) collection; torch_npu's profiler takes
    its own ``torch_npu.profiler._ExperimentalConfig`` (profiler level, AI Core metrics, ...).

    Example: ``profile(experimental_config=torch._C._profiler._ExperimentalConfig(verbose=True))``
    is reported; build the config with ``torch_npu.profiler._ExperimentalConfig`` instead.

    Fix safety: report only.
    """

    code = "NPU604"
    name = "profiler-experimental-config"
    summary = "CUDA profiler experimental_config (left in place)"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    triggers = (b"experimental_config",)


_PROFILE = "torch.profiler.profile"


api_family(
    ("torch.profiler", "torch.autograd.profiler"),
    {Safety.SAFE: ProfilerApi, Safety.REPORT_ONLY: ProfilerUnsupported},
)


@checks(ast.Call, rules=(ProfilerUseCuda,))
def check_use_cuda(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    if ctx.names.qualified_name(node.func) not in USE_CUDA_PROFILERS:
        return
    for keyword in node.keywords:
        if keyword.arg != "use_cuda":
            continue
        value = keyword.value
        device = f'"{NPU_DEVICE_TYPE}"'
        if isinstance(value, ast.Constant) and isinstance(value.value, bool):
            replacement = f"use_device={device if value.value else None}"
        else:
            replacement = f"use_device={device} if {ctx.segment(value)} else None"
        yield ProfilerUseCuda.finding(
            keyword, f"use_cuda= -> {replacement}", ctx.replace(keyword, replacement)
        )


@checks(ast.Call, rules=(ProfilerExperimentalConfig,))
def check_experimental_config(
    ctx: Context, node: ast.AST, parent: ast.AST | None
) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    if ctx.names.qualified_name(node.func) != _PROFILE:
        return
    for keyword in node.keywords:
        if keyword.arg == "experimental_config":
            yield ProfilerExperimentalConfig.finding(
                keyword,
                "experimental_config is torch's (CUDA) profiler config; torch_npu.profiler.profile "
                "takes torch_npu.profiler._ExperimentalConfig",
            )
