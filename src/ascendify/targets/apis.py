"""The CUDA -> Ascend NPU API facts: the one table that migrate, auto and analyze all read.

Names on the NPU side are those torch_npu really exports (checked against the generated wheel facts by the
tests). ``torch_npu.npu.X`` is the spelling we emit; after ``import torch_npu`` it is the same object as
``torch.npu.X``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ascendify.targets.facts import TorchNpuFacts


class Safety(str, Enum):
    """How far a change may be trusted (ruff's fix applicability)."""

    SAFE = "safe"  # applied; behaviour is the same on the NPU
    UNSAFE = "unsafe"  # applied, but flagged: results or behaviour may differ
    REPORT_ONLY = "report-only"  # left in place and reported: no faithful NPU spelling exists


@dataclass(frozen=True)
class ApiTarget:
    cuda: str  # fully qualified CUDA-side name, e.g. "torch.cuda.CUDAGraph"
    npu: str | None  # fully qualified NPU-side name; None when there is no counterpart
    safety: Safety
    note: str = ""


_NO_COUNTERPART = "has no counterpart in torch_npu"

# torch.cuda namespaces whose public names torch_npu mirrors under the same name.
SAME_NAME_NAMESPACES: dict[str, str] = {
    "torch.cuda": "torch_npu.npu",
    "torch.cuda.amp": "torch_npu.npu.amp",
    "torch.cuda.random": "torch_npu.npu.random",
    "torch.cuda.memory": "torch_npu.npu.memory",
    "torch.cuda.graphs": "torch_npu.npu.graphs",
    "torch.cuda.streams": "torch_npu.npu.streams",
}


def _report(cuda: str, note: str) -> ApiTarget:
    return ApiTarget(cuda, None, Safety.REPORT_ONLY, note)


# torch's own device-agnostic names a torch.cuda name may become, with the torch version that first
# has each: emitted only where the release's torch has it.
TORCH_NAMES_SINCE: dict[str, tuple[int, int]] = {"torch.OutOfMemoryError": (2, 5)}

# Entries that differ from a same-name mapping: renames, caveats and APIs without a counterpart.
_EXPLICIT: tuple[ApiTarget, ...] = (
    # The same class as torch.cuda.OutOfMemoryError since torch 2.5, raised by every device.
    ApiTarget("torch.cuda.OutOfMemoryError", "torch.OutOfMemoryError", Safety.SAFE),
    # CUDA graphs: renamed class; torch_npu documents graph capture for inference only.
    ApiTarget(
        "torch.cuda.CUDAGraph",
        "torch_npu.npu.NPUGraph",
        Safety.UNSAFE,
        "NPU graph capture is documented for inference only",
    ),
    *(
        ApiTarget(
            f"torch.cuda.{name}",
            f"torch_npu.npu.{name}",
            Safety.UNSAFE,
            "NPU graph capture is documented for inference only",
        )
        for name in ("graph", "graph_pool_handle", "make_graphed_callables")
    ),
    ApiTarget(
        "torch.cuda.DoubleTensor",
        "torch_npu.npu.DoubleTensor",
        Safety.UNSAFE,
        "float64 has few NPU kernels: operators may fall back to the CPU or fail",
    ),
    *(
        ApiTarget(
            f"{namespace}.CUDAPluggableAllocator",
            f"{npu_namespace}.NPUPluggableAllocator",
            Safety.UNSAFE,
            "the allocator library must be rebuilt against the NPU runtime",
        )
        for namespace, npu_namespace in (
            ("torch.cuda", "torch_npu.npu"),
            ("torch.cuda.memory", "torch_npu.npu.memory"),
        )
    ),
    ApiTarget(
        "torch.cuda._sanitizer.enable_cuda_sanitizer",
        "torch_npu.npu._sanitizer.enable_npu_sanitizer",
        Safety.SAFE,
    ),
    ApiTarget(
        "torch.cuda.get_device_capability",
        "torch_npu.npu.get_device_capability",
        Safety.UNSAFE,
        "on NPU the value is not a hardware fact (set by TORCH_NPU_DEVICE_CAPABILITY); "
        "code that branches on it may take another path",
    ),
    ApiTarget(
        "torch.cuda.get_device_properties",
        "torch_npu.npu.get_device_properties",
        Safety.SAFE,
        "NPU properties have only name, total_memory, L2_cache_size, cube_core_num, "
        "vector_core_num (no major/minor/multi_processor_count)",
    ),
    # torch.backends.cuda: flags with an NPU home, and those without.
    ApiTarget(
        "torch.backends.cuda.cufft_plan_cache",
        "torch_npu.npu.backends.fft_plan_cache",
        Safety.SAFE,
    ),
    *(
        _report(
            f"torch.backends.cuda.{name}",
            "scaled-dot-product attention backends cannot be chosen on NPU; "
            "use torch_npu.npu_fusion_attention for a fused kernel",
        )
        for name in (
            "sdp_kernel",
            "enable_flash_sdp",
            "enable_mem_efficient_sdp",
            "enable_math_sdp",
            "enable_cudnn_sdp",
            "flash_sdp_enabled",
            "mem_efficient_sdp_enabled",
            "math_sdp_enabled",
            "cudnn_sdp_enabled",
        )
    ),
    _report("torch.backends.cuda.preferred_linalg_library", "not supported on NPU"),
    _report(
        "torch.backends.cuda.matmul.allow_tf32",
        "accepted on NPU; the NPU analogue is torch_npu.npu.matmul.allow_hf32",
    ),
    _report("torch.backends.cudnn.benchmark_limit", "not supported on NPU"),
    *(
        _report(
            f"torch.backends.cudnn.{name}",
            "accepted on NPU but there is no cuDNN: the flag has no effect there",
        )
        for name in ("enabled", "benchmark", "deterministic", "allow_tf32")
    ),
    _report(
        "torch.jit.script",
        "TorchScript is not compiled for NPU (torch_npu's runtime redirect turns it off); "
        "if scripting fails on NPU, run the function eagerly",
    ),
    # torch.cuda names with no NPU counterpart (torch 2.13's torch.cuda.__all__ minus torch_npu's).
    *(
        _report(f"torch.cuda.{name}", _NO_COUNTERPART)
        for name in (
            "memory_usage",
            "list_gpu_processes",
            "temperature",
            "power_draw",
            "clock_rate",
            "device_memory_used",
            "get_arch_list",
            "get_gencode_flags",
            "get_stream_from_external",
            "current_solver_handle",
            "caching_allocator_enable",
            "caching_allocator_disabled",
            "check_error",
            "cudaStatus",
            "CudaError",
            "DeferredCudaCallError",
            "GreenContext",
            "has_half",
            "has_magma",
            "is_tf32_supported",
            "ComplexDoubleStorage",
            "ComplexFloatStorage",
            "cudart",
            "jiterator",
            "tunable",
            "sparse",
        )
    ),
    _report(
        "torch.cuda.comm",
        "torch.cuda.comm.scatter/gather are not supported on NPU; "
        "use torch.distributed collectives",
    ),
    _report(
        "torch.cuda.nccl", "NCCL bindings have no NPU counterpart; use torch.distributed (hccl)"
    ),
    # torch_npu.npu.mstx is a class of static methods (it shadows its module): same arguments.
    *(
        ApiTarget(f"torch.cuda.nvtx.{name}", f"torch_npu.npu.mstx.{name}", Safety.SAFE)
        for name in ("range_push", "range_pop", "mark")
    ),
    _report(
        "torch.cuda.nvtx",
        "this NVTX call has no NPU counterpart; torch_npu.npu.mstx (mark, range_push/range_pop, "
        "range_start/range_end) gives msprof markers",
    ),
    _report(
        "torch.cuda.profiler",
        "CUDA profiler start/stop have no NPU counterpart; use torch_npu.profiler",
    ),
    _report(
        "torch.autograd.profiler.emit_nvtx",
        "NVTX ranges have no NPU counterpart; use torch_npu.profiler",
    ),
    # Profiler: torch_npu's profiler understands the NPU activity and its own schedule.
    *(
        ApiTarget(f"torch.profiler.{name}", f"torch_npu.profiler.{name}", Safety.SAFE)
        for name in (
            "profile",
            "schedule",
            "tensorboard_trace_handler",
            "ProfilerAction",
            "ProfilerActivity",
        )
    ),
    ApiTarget(
        "torch.profiler.ProfilerActivity.CUDA",
        "torch_npu.profiler.ProfilerActivity.NPU",
        Safety.SAFE,
    ),
    # Distributed and autocast helpers that carry the device in their name.
    ApiTarget(
        "torch.distributed.is_nccl_available",
        "torch_npu.distributed.is_hccl_available",
        Safety.SAFE,
    ),
    _report(
        "torch.distributed.ProcessGroupNCCL",
        "NCCL process groups do not exist on NPU; torch_npu registers an HCCL process group "
        "(init_process_group(backend='hccl'))",
    ),
    ApiTarget("torch.get_autocast_gpu_dtype", "torch_npu.npu.get_autocast_dtype", Safety.SAFE),
    ApiTarget("torch.set_autocast_gpu_dtype", "torch_npu.npu.set_autocast_dtype", Safety.SAFE),
    # The unbound methods (map(torch.Tensor.cuda, xs), getattr(torch.Tensor, "cuda")): a bound call
    # x.cuda() is renamed by the method rule; the method object itself is the user's to port.
    *(
        _report(
            f"torch.{owner}.cuda",
            f"moves to a CUDA device; on NPU use torch.{owner}.npu (once torch_npu is imported)",
        )
        for owner in ("Tensor", "nn.Module")
    ),
    # Not CUDA APIs, but unusable on NPU as they are.
    _report(
        "torch.nn.DataParallel",
        "DataParallel is not supported on NPU; use torch.nn.parallel.DistributedDataParallel",
    ),
    _report("torch.nn.parallel.data_parallel", "not supported on NPU; use DistributedDataParallel"),
    *(
        _report(
            f"torch.utils.cpp_extension.{name}",
            "CUDA extensions do not build for NPU; port the kernels (e.g. as Ascend C operators "
            "registered through torch_npu) or use torch ops",
        )
        for name in ("CUDAExtension", "load", "load_inline")
    ),
)

# TF32 switches and their NPU counterparts: HF32 rounds differently, so the rewrite is opt-in.
HF32_FLAGS: dict[str, str] = {
    "torch.backends.cuda.matmul.allow_tf32": "torch_npu.npu.matmul.allow_hf32",
    "torch.backends.cudnn.allow_tf32": "torch_npu.npu.conv.allow_hf32",
}

_BY_CUDA_NAME: dict[str, ApiTarget] = {target.cuda: target for target in _EXPLICIT}


def explicit_targets() -> tuple[ApiTarget, ...]:
    """Every hand-written entry (for documentation and completeness tests)."""
    return _EXPLICIT


def npu_target(qualified_name: str, facts: TorchNpuFacts) -> ApiTarget | None:
    """The NPU spelling of a fully qualified CUDA-side name, or None when the name is not ours to touch.

    Explicit entries win, then a listed prefix (``torch.cuda.nvtx.range_push`` falls under
    ``torch.cuda.nvtx``), then torch_npu's same-name mirror of the namespace. Any other
    ``torch.cuda`` name is reported as having no counterpart in this torch_npu release.
    """
    explicit = _explicit_for(qualified_name)
    if explicit is not None:
        return explicit
    namespace, _, name = qualified_name.rpartition(".")
    npu_namespace = SAME_NAME_NAMESPACES.get(namespace)
    if npu_namespace is not None and facts.has(f"{npu_namespace}.{name}"):
        return ApiTarget(qualified_name, f"{npu_namespace}.{name}", Safety.SAFE)
    if qualified_name.startswith("torch.cuda."):
        return _report(qualified_name, f"{_NO_COUNTERPART} {facts.version}")
    return None


@dataclass(frozen=True)
class ApiMatch:
    """The NPU side of a full attribute chain such as ``torch.cuda.Stream.wait_stream``."""

    target: ApiTarget  # the table entry for the longest prefix of the chain that has one
    npu_name: str | None  # the whole chain spelled for the NPU; None: report only


def match_api(qualified_name: str, facts: TorchNpuFacts) -> ApiMatch | None:
    """Map a full chain by its longest prefix that the table knows, checking the result exists.

    ``torch.cuda.Stream.wait_stream`` maps through ``torch.cuda.Stream``; a name that would map to
    something this torch_npu release does not export is reported instead of emitted.
    """
    _, known = _MATCHES.setdefault(id(facts), (facts, {}))
    if qualified_name not in known:
        known[qualified_name] = _match_api(qualified_name, facts)
    return known[qualified_name]


# Answers of match_api by the id of the facts they came from (which each entry keeps alive, so the
# id is never another's): the migration and the analysis ask about the same names, file after file.
_MATCHES: dict[int, tuple[TorchNpuFacts, dict[str, ApiMatch | None]]] = {}


# The module itself held as a value (``mod = torch.cuda if gpu else torch.cpu``): its members are
# read at run time, so it must be the NPU's module. It names only itself: its members map one by one.
MODULE_AS_VALUE = ApiTarget("torch.cuda", "torch_npu.npu", Safety.SAFE)


def _match_api(qualified_name: str, facts: TorchNpuFacts) -> ApiMatch | None:
    if qualified_name == MODULE_AS_VALUE.cuda:
        return ApiMatch(MODULE_AS_VALUE, MODULE_AS_VALUE.npu)
    parts = qualified_name.split(".")
    unknown: ApiMatch | None = None
    for end in range(len(parts), 1, -1):
        prefix = ".".join(parts[:end])
        target = npu_target(prefix, facts)
        if target is None:
            continue
        if target.npu is None:
            if _explicit_for(prefix) is not None:
                return ApiMatch(target, None)
            # An unknown torch.cuda name may still be a member of a known one: keep looking.
            unknown = unknown or ApiMatch(target, None)
            continue
        npu_name = ".".join([target.npu, *parts[end:]])
        if target.npu in TORCH_NAMES_SINCE:
            return _torch_name(qualified_name, target, npu_name, facts)
        if facts.has(npu_name):
            return ApiMatch(target, npu_name)
        missing = f"{npu_name} does not exist in torch_npu {facts.version}"
        return ApiMatch(ApiTarget(qualified_name, None, Safety.REPORT_ONLY, missing), None)
    return unknown


def _torch_name(
    qualified_name: str, target: ApiTarget, npu_name: str, facts: TorchNpuFacts
) -> ApiMatch:
    """A torch name the release's torch may be too old to have (``torch.OutOfMemoryError``)."""
    assert target.npu is not None
    since = TORCH_NAMES_SINCE[target.npu]
    torch = facts.torch_version()
    if torch is not None and torch >= since:
        return ApiMatch(target, npu_name)
    built_for = "an unstated torch" if torch is None else f"torch {torch[0]}.{torch[1]}"
    missing = (
        f"{target.npu} needs torch {since[0]}.{since[1]} or later; "
        f"torch_npu {facts.version} is built for {built_for}"
    )
    return ApiMatch(ApiTarget(qualified_name, None, Safety.REPORT_ONLY, missing), None)


def _explicit_for(qualified_name: str) -> ApiTarget | None:
    name = qualified_name
    while name:
        target = _BY_CUDA_NAME.get(name)
        if target is not None:
            # A parent module's report covers its members; a rename covers only itself.
            return target if name == qualified_name or target.npu is None else None
        name = name.rpartition(".")[0]
    return None
