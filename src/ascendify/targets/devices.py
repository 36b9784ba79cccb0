"""Where a device, a backend or a device-named variable appears: arguments, strings, environment.

Static migration rewrites literals found in these places; the runtime redirect wraps the same callables.
"""

from __future__ import annotations

from dataclasses import dataclass

CUDA_DEVICE_TYPE = "cuda"
NPU_DEVICE_TYPE = "npu"

# Communication backends named in init_process_group/new_group arguments.
BACKEND_NAMES: dict[str, str] = {"nccl": "hccl", "NCCL": "HCCL"}

# Tensor/Module/Storage members named after the device.
METHOD_RENAMES: dict[str, str] = {"cuda": "npu"}
ATTRIBUTE_RENAMES: dict[str, str] = {"is_cuda": "is_npu"}


# Keywords that take a device in any call: torch's, transformers' ``from_pretrained(device_map=...)``
# and accelerate's (they take the NPU's name too).
DEVICE_KEYWORDS = frozenset(
    {"device", "device_type", "map_location", "output_device", "pin_memory_device",
     "device_ids", "device_id", "device_map", "to_device"}
)  # fmt: skip


@dataclass(frozen=True)
class DeviceParameter:
    """A callable one of whose arguments is a device (or device type, or map_location)."""

    callable: str  # qualified function name, or ".name" for a method on any receiver
    keywords: tuple[str, ...] = ("device",)
    positions: tuple[int, ...] = ()


# The RNG state functions of torch.cuda (and torch.cuda.random) and the position of their device:
# set_rng_state(new_state, device="cuda") takes it second.
RNG_DEVICE_FUNCTIONS = {"get_rng_state": 0, "set_rng_state": 1}

_TENSOR_FACTORIES = (
    "tensor", "as_tensor", "asarray", "zeros", "zeros_like", "ones", "ones_like", "empty",
    "empty_like", "empty_strided", "empty_permuted", "full", "full_like", "rand", "rand_like",
    "randn", "randn_like", "randint", "randint_like", "randperm", "arange", "range", "linspace",
    "logspace", "eye", "normal", "frombuffer", "from_file", "scalar_tensor", "tril_indices",
    "triu_indices", "sparse_coo_tensor", "sparse_csr_tensor", "sparse_csc_tensor",
    "sparse_bsr_tensor", "sparse_bsc_tensor", "sparse_compressed_tensor", "hann_window",
    "hamming_window", "bartlett_window", "blackman_window", "kaiser_window", "empty_quantized",
)  # fmt: skip

_MODULE_CONSTRUCTORS = (
    "Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
    "ConvTranspose2d", "ConvTranspose3d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
    "SyncBatchNorm", "LayerNorm", "GroupNorm", "RMSNorm", "InstanceNorm1d", "InstanceNorm2d",
    "InstanceNorm3d", "Embedding", "EmbeddingBag", "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell",
    "GRUCell", "MultiheadAttention", "Transformer", "TransformerEncoderLayer",
    "TransformerDecoderLayer", "PReLU",
)  # fmt: skip

DEVICE_PARAMETERS: tuple[DeviceParameter, ...] = (
    *(DeviceParameter(f"torch.{name}") for name in _TENSOR_FACTORIES),
    *(DeviceParameter(f"torch.nn.{name}") for name in _MODULE_CONSTRUCTORS),
    DeviceParameter("torch.device", keywords=("type",), positions=(0,)),
    DeviceParameter("torch.set_default_device", positions=(0,)),
    DeviceParameter("torch.get_device_module", positions=(0,)),
    DeviceParameter("torch.Generator", positions=(0,)),
    DeviceParameter("torch.Event", positions=(0,)),
    DeviceParameter("torch.Stream", positions=(0,)),
    DeviceParameter("torch.UntypedStorage"),
    DeviceParameter("torch.fft.fftfreq"),
    DeviceParameter("torch.fft.rfftfreq"),
    DeviceParameter("torch.load", keywords=("map_location",), positions=(1,)),
    DeviceParameter("torch.autocast", keywords=("device_type",), positions=(0,)),
    DeviceParameter("torch.amp.autocast", keywords=("device_type",), positions=(0,)),
    DeviceParameter("torch.amp.GradScaler", keywords=("device",), positions=(0,)),
    DeviceParameter("torch.amp.custom_fwd", keywords=("device_type",)),
    DeviceParameter("torch.amp.custom_bwd", keywords=("device_type",)),
    DeviceParameter("torch.is_autocast_enabled", keywords=("device_type",), positions=(0,)),
    DeviceParameter("torch.get_autocast_dtype", keywords=("device_type",), positions=(0,)),
    DeviceParameter("torch.set_autocast_dtype", keywords=("device_type",), positions=(0,)),
    DeviceParameter("torch.distributed.init_process_group", keywords=("device_id",)),
    DeviceParameter("torch.distributed.device_mesh.init_device_mesh", keywords=("device_type",),
                    positions=(0,)),
    DeviceParameter("torch.distributed.init_device_mesh", keywords=("device_type",),
                    positions=(0,)),
    DeviceParameter("torch.distributed.device_mesh.DeviceMesh", keywords=("device_type",),
                    positions=(0,)),
    DeviceParameter("torch.distributed.fsdp.FullyShardedDataParallel", keywords=("device_id",)),
    DeviceParameter("torch.nn.parallel.DistributedDataParallel",
                    keywords=("device_ids", "output_device")),
    DeviceParameter("torch.utils.data.DataLoader", keywords=("pin_memory_device",)),
    DeviceParameter("torch.utils.cpp_extension.include_paths", keywords=("device_type",)),
    DeviceParameter(".to", positions=(0,)),
    DeviceParameter(".to_empty", positions=()),
    DeviceParameter(".pin_memory", positions=(0,)),
    *(DeviceParameter(f".{name}") for name in (
        "new_empty", "new_empty_strided", "new_full", "new_ones", "new_tensor", "new_zeros",
    )),
)  # fmt: skip


# What static migration renames and whose device argument must then name the NPU in the same pass:
# ``x.cuda("cuda:0")`` (renamed ``.npu()``) and torch.cuda functions taking a device (renamed to
# torch_npu.npu): the device's position, every one named ``device`` by keyword. The runtime redirect
# maps these callables as a whole instead.
_CUDA_DEVICE_FUNCTIONS = {
    **dict.fromkeys((
        "get_device_properties", "get_device_name", "get_device_capability", "set_device",
        "synchronize", "mem_get_info", "memory_stats", "memory_summary", "memory_snapshot",
        "memory_allocated", "max_memory_allocated", "reset_max_memory_allocated", "memory_reserved",
        "max_memory_reserved", "reset_max_memory_cached", "reset_peak_memory_stats",
        "current_stream", "default_stream", "utilization", "can_device_access_peer", "device",
        "device_of",
    ), 0),
    **RNG_DEVICE_FUNCTIONS,
}  # fmt: skip

RENAMED_DEVICE_PARAMETERS: tuple[DeviceParameter, ...] = (
    DeviceParameter(".cuda", positions=(0,)),
    *(
        DeviceParameter(f"torch.cuda.{name}", positions=(position,))
        for name, position in _CUDA_DEVICE_FUNCTIONS.items()
    ),
    # The RNG functions are torch.cuda.random's, re-exported by torch.cuda.
    *(
        DeviceParameter(f"torch.cuda.random.{name}", positions=(position,))
        for name, position in RNG_DEVICE_FUNCTIONS.items()
    ),
)


# Callables whose device argument defaults to CUDA when left out: (keyword, position) of it.
CUDA_DEFAULT_DEVICE_CALLS: dict[str, tuple[str, int]] = {
    "torch.amp.GradScaler": ("device", 0),
    "torch.GradScaler": ("device", 0),
    "torch.random.fork_rng": ("device_type", 3),
}

# Profiler entry points whose use_cuda flag becomes use_device (torch's privateuse1 spelling).
USE_CUDA_PROFILERS: tuple[str, ...] = (
    "torch.autograd.profiler.profile",
    "torch.autograd.profiler_legacy.profile",
)


@dataclass(frozen=True)
class BackendParameter:
    """A callable one of whose arguments names a communication backend."""

    callable: str
    keyword: str
    position: int | None


BACKEND_PARAMETERS: tuple[BackendParameter, ...] = (
    BackendParameter("torch.distributed.init_process_group", "backend", 0),
    BackendParameter("torch.distributed.new_group", "backend", 2),
    BackendParameter("torch.distributed.new_subgroups", "backend", 2),
)


@dataclass(frozen=True)
class EnvVarTarget:
    cuda: str
    npu: str | None  # None: no NPU counterpart (reported)
    note: str = ""


_HCCL_TORCH_VARIABLES = (
    "ASYNC_ERROR_HANDLING", "BLOCKING_WAIT", "DESYNC_DEBUG", "DUMP_ON_TIMEOUT",
    "ENABLE_MONITORING", "HEARTBEAT_TIMEOUT_SEC", "TRACE_BUFFER_SIZE", "HIGH_PRIORITY",
    "DEBUG_INFO_TEMP_FILE", "DEBUG_INFO_PIPE_FILE", "COORD_CHECK_MILSEC", "TRACE_CPP_STACK",
)  # fmt: skip

ENV_VARS: tuple[EnvVarTarget, ...] = (
    EnvVarTarget("CUDA_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES"),
    EnvVarTarget("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_NPU_ALLOC_CONF"),
    EnvVarTarget("CUDA_LAUNCH_BLOCKING", "ASCEND_LAUNCH_BLOCKING"),
    EnvVarTarget("NCCL_ASYNC_ERROR_HANDLING", "HCCL_ASYNC_ERROR_HANDLING"),
    EnvVarTarget("NCCL_BLOCKING_WAIT", "HCCL_BLOCKING_WAIT"),
    *(EnvVarTarget(f"TORCH_NCCL_{name}", f"TORCH_HCCL_{name}") for name in _HCCL_TORCH_VARIABLES),
    EnvVarTarget("CUBLAS_WORKSPACE_CONFIG", None, "cuBLAS workspace settings have no NPU "
                 "counterpart; determinism on NPU: torch.use_deterministic_algorithms"),
    EnvVarTarget("NVIDIA_TF32_OVERRIDE", None, "no NPU counterpart; see "
                 "torch_npu.npu.matmul.allow_hf32"),
    EnvVarTarget("NCCL_DEBUG", None, "no direct counterpart; HCCL logs follow "
                 "ASCEND_GLOBAL_LOG_LEVEL"),
    EnvVarTarget("NCCL_SOCKET_IFNAME", "HCCL_SOCKET_IFNAME"),
)  # fmt: skip

ENV_VARS_BY_CUDA_NAME: dict[str, EnvVarTarget] = {target.cuda: target for target in ENV_VARS}


@dataclass(frozen=True)
class CudaOnlyLibrary:
    module: str  # top-level import name
    advice: str


CUDA_ONLY_LIBRARIES: tuple[CudaOnlyLibrary, ...] = (
    CudaOnlyLibrary("flash_attn", "ascendify migrate ports flash_attn_func, the qkvpacked and "
                    "varlen forms to torch_npu.npu_fusion_attention (--target portable: "
                    "scaled_dot_product_attention); elsewhere call npu_fusion_attention"),
    CudaOnlyLibrary("xformers", "ascendify migrate ports memory_efficient_attention to "
                    "torch_npu.npu_fusion_attention (--target portable: "
                    "scaled_dot_product_attention)"),
    CudaOnlyLibrary("bitsandbytes", "CUDA kernels only: 8-bit optimizers -> torch.optim "
                    "(AdamW8bit -> torch.optim.AdamW, more optimizer memory); quantized layers -> "
                    "load the model in bfloat16"),
    CudaOnlyLibrary("triton", "Triton kernels (@triton.jit) do not run on NPU as written: rewrite "
                    "them with torch operators or port them to Ascend (triton-ascend, Ascend C)"),
    CudaOnlyLibrary("apex", "NVIDIA apex does not run on NPU: ascendify migrate ports FusedAdam/"
                    "FusedSGD (NpuFused*), apex DDP and fused norms (torch); apex.amp -> "
                    "torch.autocast + torch.amp.GradScaler, or Ascend's apex build"),
    CudaOnlyLibrary("amp_C", "apex's CUDA kernels; remove the import (torch.amp covers mixed "
                    "precision)"),
    CudaOnlyLibrary("fused_layer_norm_cuda", "apex's layer-norm kernels; use "
                    "torch.nn.functional.layer_norm / rms_norm"),
    CudaOnlyLibrary("cupy", "CUDA arrays; use torch tensors on the NPU"),
    CudaOnlyLibrary("pycuda", "CUDA driver bindings have no NPU counterpart"),
    CudaOnlyLibrary("pynvml", "NVML queries; use npu-smi or torch_npu.npu.mem_get_info"),
    CudaOnlyLibrary("nvidia", "NVIDIA runtime packages (DALI, cuDNN, ...) have no NPU "
                    "counterpart"),
    CudaOnlyLibrary("tensorrt", "TensorRT is NVIDIA-only; export with torch and use Ascend's "
                    "inference tools"),
    CudaOnlyLibrary("transformer_engine", "NVIDIA Transformer Engine is CUDA-only: te.Linear/"
                    "te.LayerNorm -> torch.nn.Linear/LayerNorm, fp8_autocast -> "
                    "torch.autocast(dtype=torch.bfloat16)"),
    CudaOnlyLibrary("numba.cuda", "numba CUDA kernels do not run on NPU"),
    CudaOnlyLibrary("deepspeed.ops", "DeepSpeed's CUDA ops need the NPU build of DeepSpeed "
                    "(with torch_npu)"),
)  # fmt: skip
# The first part of each library's module: most imported names are told apart by it alone.
_LIBRARY_ROOTS = frozenset(library.module.partition(".")[0] for library in CUDA_ONLY_LIBRARIES)


def cuda_only_library(module: str) -> CudaOnlyLibrary | None:
    """The CUDA-only library that ``module`` (or a name imported from one) belongs to, if any."""
    if module.partition(".")[0] not in _LIBRARY_ROOTS:
        return None
    for library in CUDA_ONLY_LIBRARIES:
        if module == library.module or module.startswith(library.module + "."):
            return library
    return None
