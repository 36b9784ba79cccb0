"""The CUDA -> portable API facts: device-agnostic spellings that run on NPU, CUDA and CPU alike.

Spellings use public torch APIs where they work on every device (``torch.accelerator.is_available``,
``torch.amp``), and the generated ``portable_device`` helper module where they do not
(``torch.accelerator.synchronize`` raises on a CPU-only host; CPU events have no timing).
"""

from __future__ import annotations

from dataclasses import dataclass

from ascendify.targets.apis import Safety
from ascendify.targets.facts import TorchNpuFacts
from ascendify.targets.values import VALUE_DIFFERENCES

HELPER_MODULE = "portable_device"  # generated into the result; never an import of ascendify
HELPER_DEVICE_TYPE = f"{HELPER_MODULE}.device_type()"
HELPER_DEVICE = f"{HELPER_MODULE}.device"
HELPER_BACKEND = f"{HELPER_MODULE}.backend()"
HELPER_DEVICE_IDS = f"{HELPER_MODULE}.device_ids"
HELPER_IS_AVAILABLE = f"{HELPER_MODULE}.is_available()"
# torch.random.fork_rng for the host's device: the CPU's state alone without an accelerator.
HELPER_FORK_RNG = f"{HELPER_MODULE}.fork_rng"
# A device given at run time (an option, a configuration): "cuda"/"cuda:N" -> the host's device.
HELPER_GIVEN_DEVICE = f"{HELPER_MODULE}.given_device"
# Seeds the generator get_rng_state reads, the CPU's included (an RNG tracker's seeded fork).
HELPER_SEED_RNG_STATE = f"{HELPER_MODULE}.seed_rng_state"


@dataclass(frozen=True)
class PortableTarget:
    cuda: str  # fully qualified CUDA-side name
    portable: str | None  # qualified portable name ("torch." or "portable_device."); None: report
    safety: Safety
    note: str = ""


_HELPER_FUNCTIONS = (
    "device_count", "current_device", "set_device", "synchronize", "manual_seed",
    "manual_seed_all", "seed", "seed_all", "empty_cache", "memory_allocated",
    "max_memory_allocated", "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats",
    "memory_stats", "default_stream",
    "get_device_name", "Event",
    "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor",
    "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor",
)  # fmt: skip

# The dtype of each legacy CUDA tensor type, for ``x.type(torch.cuda.FloatTensor)`` and
# ``isinstance(x, torch.cuda.FloatTensor)``, where a constructor cannot stand in for the type.
LEGACY_TENSOR_DTYPES: dict[str, str] = {
    "FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
    "BFloat16Tensor": "bfloat16", "LongTensor": "int64", "IntTensor": "int32",
    "ShortTensor": "int16", "CharTensor": "int8", "ByteTensor": "uint8", "BoolTensor": "bool",
}  # fmt: skip

# Members that torch.cpu has too, so ``portable_device.module().X`` works on every device.
_DEVICE_MODULE_MEMBERS = ("Stream", "StreamContext", "current_stream", "stream", "is_initialized")

_NOT_PORTABLE = "has no device-agnostic counterpart; keep it behind a device check"

PORTABLE_TARGETS: tuple[PortableTarget, ...] = (
    PortableTarget("torch.cuda.is_available", "torch.accelerator.is_available", Safety.SAFE),
    # The same class since torch 2.5 (the portable result needs 2.6): raised by every device.
    PortableTarget("torch.cuda.OutOfMemoryError", "torch.OutOfMemoryError", Safety.SAFE),
    *(
        PortableTarget(f"torch.cuda.{name}", f"{HELPER_MODULE}.{name}", Safety.SAFE)
        for name in _HELPER_FUNCTIONS
    ),
    *(
        PortableTarget(f"torch.cuda.{name}", f"{HELPER_MODULE}.module().{name}", Safety.SAFE)
        for name in _DEVICE_MODULE_MEMBERS
    ),
    # RNG state: the accelerator's generator, or the CPU's on a host without one (the family of
    # model-parallel RNG trackers: Megatron-LM, DeepSpeed, fairscale, apex).
    *(
        PortableTarget(f"{namespace}.{name}", f"{HELPER_MODULE}.{name}", Safety.SAFE)
        for namespace in ("torch.cuda", "torch.cuda.random")
        for name in ("get_rng_state", "set_rng_state", "get_rng_state_all", "set_rng_state_all",
                     "initial_seed")
    ),
    PortableTarget("torch.cuda.default_generators", f"{HELPER_MODULE}.default_generators()",
                   Safety.SAFE),
    PortableTarget("torch.cuda._lazy_call", f"{HELPER_MODULE}.lazy_call", Safety.SAFE),
    PortableTarget("torch.cuda._sleep", f"{HELPER_MODULE}.device_sleep", Safety.SAFE),
    PortableTarget("torch.cuda.device", f"{HELPER_MODULE}.device_scope", Safety.SAFE),
    # The trackers' setter for old torch, chosen where torch._C has it (a CUDA build of torch).
    PortableTarget("torch._C._cuda_setRNGState", f"{HELPER_MODULE}.set_rng_state", Safety.SAFE),
    # torch.cpu has no is_bf16_supported: False without an accelerator, as torch.cuda's is there.
    PortableTarget("torch.cuda.is_bf16_supported",
                   f'getattr({HELPER_MODULE}.module(), "is_bf16_supported", bool)', Safety.SAFE),
    # torch.cuda.amp: torch.amp takes the device type as its first argument (added by the rule).
    PortableTarget("torch.cuda.amp", "torch.amp", Safety.SAFE),
    PortableTarget("torch.cuda.amp.autocast", "torch.amp.autocast", Safety.SAFE),
    PortableTarget("torch.cuda.amp.GradScaler", "torch.amp.GradScaler", Safety.SAFE),
    # The modules those come from: torch.amp's take the device type too; torch.amp has no common.
    PortableTarget("torch.cuda.amp.autocast_mode.autocast", "torch.amp.autocast", Safety.SAFE),
    PortableTarget("torch.cuda.amp.grad_scaler.GradScaler", "torch.amp.GradScaler", Safety.SAFE),
    PortableTarget("torch.cuda.amp.common", None, Safety.REPORT_ONLY,
                   "tells whether CUDA is available; not torch.accelerator.is_available() asks "
                   "for any accelerator"),
    PortableTarget("torch.cuda.amp.custom_fwd", None, Safety.REPORT_ONLY,
                   "use torch.amp.custom_fwd(device_type=...)"),
    PortableTarget("torch.cuda.amp.custom_bwd", None, Safety.REPORT_ONLY,
                   "use torch.amp.custom_bwd(device_type=...)"),
    PortableTarget("torch.cuda.get_device_properties", None, Safety.REPORT_ONLY,
                   "device properties differ per device type and do not exist on CPU"),
    PortableTarget("torch.cuda.get_device_capability", None, Safety.REPORT_ONLY,
                   "a CUDA compute capability has no meaning on other devices"),
    PortableTarget("torch.cuda.nvtx", None, Safety.REPORT_ONLY,
                   "NVTX markers are read by NVIDIA tools only"),
    PortableTarget("torch.cuda.CUDAGraph", None, Safety.REPORT_ONLY,
                   "graph capture is device specific (torch.accelerator.Graph needs an accelerator)"),
    PortableTarget("torch.cuda.graph", None, Safety.REPORT_ONLY, "graph capture is device specific"),
    PortableTarget("torch.cuda.make_graphed_callables", None, Safety.REPORT_ONLY,
                   "graph capture is device specific"),
    PortableTarget("torch.cuda.comm", None, Safety.REPORT_ONLY, "use torch.distributed collectives"),
    PortableTarget("torch.cuda.nccl", None, Safety.REPORT_ONLY, "use torch.distributed collectives"),
)  # fmt: skip

_BY_NAME = {target.cuda: target for target in PORTABLE_TARGETS}


def portable_target(qualified: str) -> tuple[PortableTarget, str] | None:
    """The entry for the longest known prefix of a ``torch.cuda`` chain, and the rest of the chain.

    Any other ``torch.cuda`` member is reported: it may not exist on every device.
    """
    if not (qualified == "torch.cuda" or qualified.startswith("torch.cuda.")):
        exact = _BY_NAME.get(qualified)  # a private CUDA name of torch._C
        return None if exact is None else (exact, "")
    name = qualified
    while name != "torch.cuda":
        target = _BY_NAME.get(name)
        if target is not None:
            return target, qualified[len(name) :]
        name = name.rpartition(".")[0]
    if qualified == "torch.cuda":
        return None  # the bare module (as in ``import torch.cuda``) is not an API use
    return PortableTarget(qualified, None, Safety.REPORT_ONLY, _NOT_PORTABLE), ""


def has_no_counterpart(qualified: str) -> bool:
    """Whether the migration leaves ``qualified`` as written, reported: a ``torch.cuda`` member (or
    a private CUDA name of ``torch._C``) with no device-agnostic spelling, which runs on CUDA only."""
    found = portable_target(qualified)
    return found is not None and found[0].portable is None


HELPER_MODULE_OBJECT = f"{HELPER_MODULE}.module()"
# Their NPU value differs (ascendify.targets.values): code reading it would take another path.
_DIFFERENT_VALUES = frozenset(entry.cuda for entry in VALUE_DIFFERENCES)


def module_member(qualified: str, facts: TorchNpuFacts) -> str | None:
    """``portable_device.module().X`` for a ``torch.cuda.X`` that the table does not list and that
    torch_npu's device module has too (``mem_get_info``, ``memory_summary``, ...), else None.

    Right only where an accelerator is known to be present: the CPU's module lacks most of them.
    """
    namespace, _, name = qualified.rpartition(".")
    if namespace == "torch.cuda.random":  # the module torch.cuda's RNG functions come from
        namespace, qualified = "torch.cuda", f"torch.cuda.{name}"
    if namespace != "torch.cuda" or qualified in _DIFFERENT_VALUES or name.startswith("_"):
        return None
    if qualified in _BY_NAME or not facts.has(f"torch_npu.npu.{name}"):
        return None
    return f"{HELPER_MODULE_OBJECT}.{name}"
