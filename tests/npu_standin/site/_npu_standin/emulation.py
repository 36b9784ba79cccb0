"""What the stand-in does for each torch_npu name it emulates, keyed by where torch_npu defines it.

Everything runs on the CPU (see ``placement``): device management keeps an index and checks it,
synchronization and memory management have nothing to do, streams and events run in host order and
time with the host clock, autocast and GradScaler are torch's own for the ``npu`` device type (no
autocast kernel is registered for it, so regions compute in float32 exactly as the CPU does).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import torch

from _npu_standin import legacy_types
from _npu_standin.attention import npu_fusion_attention
from _npu_standin.optim import EMULATED_OPTIMIZERS
from _npu_standin.placement import is_npu
from _npu_standin.profiling import EMULATED_PROFILER
from _npu_standin.strict import AsIs, not_emulated

# How many npu devices the stand-in reports: NPU_STANDIN_DEVICES, else torchrun's local world size.
DEVICES_VARIABLES = ("NPU_STANDIN_DEVICES", "LOCAL_WORLD_SIZE")
_state = SimpleNamespace(device=0, stream=None)
# The npu generators, one per device as torch_npu's default_generators: npu tensors are CPU tensors
# and draw from the CPU's generator, so that is the generator of every npu index (as the redirect
# makes torch.cuda's on the CPU): saving, restoring and seeding it steers what npu code draws.


def device_count() -> int:
    for variable in DEVICES_VARIABLES:
        if os.environ.get(variable):
            return int(os.environ[variable])
    return 1


def device_index(device: Any = None) -> int:
    """The npu index ``device`` names (None and bare "npu": the current one), checked as torch_npu does."""
    if device is None:
        return int(_state.device)
    if isinstance(device, str | torch.device) and not is_npu(device):
        raise ValueError(f"Expected a npu device, but got: {device}")
    index = torch.device(device).index if not isinstance(device, int) else device
    index = int(_state.device) if index is None else index
    if not 0 <= index < device_count():
        raise RuntimeError(f"Invalid device ID {index}: the stand-in has {device_count()} npu")
    return index


def set_device(device: Any) -> None:
    _state.device = device_index(device)


def current_device() -> int:
    return int(_state.device)


def synchronize(device: Any = None) -> None:
    device_index(device)


def default_generators() -> tuple[torch.Generator, ...]:
    return (torch.default_generator,) * device_count()


def generator(device: Any = "npu") -> torch.Generator:
    return default_generators()[device_index(device)]


_queued_calls: list[Callable[[], None]] = []


def lazy_call(cb: Callable[[], None]) -> None:
    """torch_npu.npu._lazy_call: the wheel runs ``cb`` at once once the npu is initialized and
    queues it until then; the stand-in's npu is initialized when imported (is_initialized())."""
    _queued_calls.append(cb)
    while _queued_calls:
        _queued_calls.pop(0)()


def manual_seed(seed: int) -> None:
    lazy_call(lambda: generator().manual_seed(int(seed)))


def manual_seed_all(seed: int) -> None:
    for index in range(device_count()):
        lazy_call(lambda index=index: generator(index).manual_seed(int(seed)))


def seed() -> None:
    lazy_call(lambda: generator().seed())


def initial_seed() -> int:
    return generator().initial_seed()


def get_rng_state(device: Any = "npu") -> torch.Tensor:
    return generator(device).get_state()


def set_rng_state(new_state: torch.Tensor, device: Any = "npu") -> None:
    new_state = new_state.clone(memory_format=torch.contiguous_format)
    lazy_call(lambda: generator(device).set_state(new_state))


def get_rng_state_all() -> list[torch.Tensor]:
    return [get_rng_state(index) for index in range(device_count())]


def set_rng_state_all(new_states: Any) -> None:
    for index, state in enumerate(new_states):
        set_rng_state(state, index)


def returns(value: Any) -> Callable[..., Any]:
    """A torch_npu query whose answer on the CPU is a constant (signatures are checked before)."""

    def constant(*args: Any, **kwargs: Any) -> Any:
        return value

    return constant


def mem_get_info(device: Any = None) -> tuple[int, int]:
    page = os.sysconf("SC_PAGE_SIZE")
    return page * os.sysconf("SC_AVPHYS_PAGES"), page * os.sysconf("SC_PHYS_PAGES")


def get_device_properties(device_name: Any = None) -> SimpleNamespace:
    device_index(device_name)
    return SimpleNamespace(name="npu stand-in", total_memory=mem_get_info()[1], cube_core_num=0)


def get_device_capability(device: Any = None) -> tuple[int, int] | None:
    """As torch_npu: not a hardware fact, but TORCH_NPU_DEVICE_CAPABILITY ("major.minor") if set."""
    configured = re.fullmatch(r"(\d+)\.(\d+)", os.environ.get("TORCH_NPU_DEVICE_CAPABILITY", ""))
    if configured is None:
        warnings.warn("set the device capability with TORCH_NPU_DEVICE_CAPABILITY", stacklevel=2)
        return None
    return int(configured[1]), int(configured[2])


# The options a program set (set_compile_mode, config switches): they change NPU kernels, none of
# the CPU's, so they are only recorded, for tests to read.
OPTIONS: dict[str, Any] = {}


def set_option(option: Any) -> None:
    if not isinstance(option, dict):
        raise TypeError("npu option must be a dict.")


def set_compile_mode(jit_compile: bool = False) -> None:
    OPTIONS["jit_compile"] = jit_compile


class Settings:
    """torch.npu.config / matmul / conv: switches that change NPU kernels, none of the CPU's."""

    def __init__(self, **defaults: Any) -> None:
        self.__dict__.update(defaults)

    def __setattr__(self, name: str, value: Any) -> None:
        OPTIONS[name] = value
        super().__setattr__(name, value)


class Event:
    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:  # fmt: skip
        self.enable_timing = enable_timing
        self.recorded_at: float | None = None

    def record(self, stream: Any = None) -> None:
        self.recorded_at = time.perf_counter()

    def wait(self, stream: Any = None) -> None:
        """Work runs in program order on the CPU: nothing to wait for."""

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        """Recorded work is already done on the CPU."""

    def elapsed_time(self, end_event: Event) -> float:
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self.recorded_at is None or end_event.recorded_at is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event.recorded_at - self.recorded_at) * 1000.0


class Stream:
    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        self.device = torch.device("npu", device_index(device))
        self.priority = priority

    def wait_event(self, event: Event) -> None:
        event.wait(self)

    def wait_stream(self, stream: Stream) -> None:
        """Streams are all the CPU's program order."""

    def record_event(self, event: Event | None = None) -> Event:
        event = event or public("Event")()
        event.record(self)
        return event

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        """Work queued on the stream is already done on the CPU."""


def public(name: str) -> Any:
    """torch_npu.npu's class ``name`` as user code sees it (the wheel-checked subclass)."""
    return getattr(sys.modules["torch_npu.npu"], name)


def current_stream(device: Any = None) -> Stream:
    stream: Stream = _state.stream or public("Stream")(device)
    return stream


def default_stream(device: Any = None) -> Stream:
    stream: Stream = public("Stream")(device)
    return stream


def set_stream(stream: Stream | None) -> None:
    _state.stream = stream


class StreamContext:
    def __init__(self, stream_ctx: Stream | None) -> None:
        self.stream = stream_ctx
        self.previous: Stream | None = None

    def __enter__(self) -> Stream | None:
        self.previous = _state.stream
        if self.stream is not None:
            _state.stream = self.stream
        return self.stream

    def __exit__(self, *exc_info: object) -> None:
        _state.stream = self.previous


class DeviceContext:
    """torch.npu.device(d): d is the current device inside the block."""

    def __init__(self, device: Any) -> None:
        self.index = None if device is None or device == -1 else device_index(device)
        self.previous = 0

    def __enter__(self) -> None:
        self.previous = current_device()
        if self.index is not None:
            set_device(self.index)

    def __exit__(self, *args: object) -> None:
        set_device(self.previous)


class Autocast(torch.autocast):
    def __init__(self, enabled: bool = True, dtype: torch.dtype = torch.float16,
                 cache_enabled: bool = True) -> None:  # fmt: skip
        super().__init__("npu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(torch.amp.GradScaler):
    def __init__(  # noqa: PLR0917 (the wheel's signature)
        self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5, growth_interval: int = 2000, dynamic: bool = True,
                 enabled: bool = True) -> None:  # fmt: skip
        if not dynamic:
            not_emulated("torch_npu.npu.amp.GradScaler(dynamic=False)")
        super().__init__("npu", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


class Mstx:
    """Profiler marks and ranges: nothing records them on the CPU."""

    @staticmethod
    def mark(message: str, stream: Any = None, domain: str = "default") -> None:
        """No profiler is listening."""

    @staticmethod
    def range_push(message: str, stream: Any = None, domain: str = "default") -> int:
        return 0

    @staticmethod
    def range_pop(domain: str = "default") -> int:
        return 0

    @staticmethod
    def range_start(message: str, stream: Any = None, domain: str = "default") -> int:
        return 0

    @staticmethod
    def range_end(range_id: int, domain: str = "default") -> None:
        """No profiler is listening."""


class Annotate(contextlib.ContextDecorator):
    def __init__(self, message: str = "", stream: Any = None, domain: str = "default") -> None:
        self.message = message

    def __enter__(self) -> Annotate:
        return self

    def __exit__(self, *exc_info: object) -> None:
        """No profiler is listening."""


@contextlib.contextmanager
def stream(stream: Stream | None) -> Iterator[None]:
    with StreamContext(stream):
        yield


NPU = "torch_npu.npu"
NOTHING = returns(None)
EMULATED: dict[str, Any] = {
    f"{NPU}.is_available": returns(True),
    f"{NPU}.is_initialized": returns(True),
    f"{NPU}.init": NOTHING,
    f"{NPU}.device_count": device_count,
    f"{NPU}.utils.set_device": set_device,
    f"{NPU}.utils.current_device": current_device,
    f"{NPU}.utils.synchronize": synchronize,
    f"{NPU}.utils.device": DeviceContext,
    f"{NPU}.utils.is_bf16_supported": returns(True),
    f"{NPU}.utils.current_stream": current_stream,
    f"{NPU}.utils.default_stream": default_stream,
    f"{NPU}.utils.set_stream": set_stream,
    f"{NPU}.utils.stream": stream,
    f"{NPU}.utils.StreamContext": StreamContext,
    f"{NPU}.utils.ipc_collect": NOTHING,
    f"{NPU}.get_device_name": returns("npu stand-in"),
    f"{NPU}.get_device_properties": get_device_properties,
    f"{NPU}.mem_get_info": mem_get_info,
    f"{NPU}.get_device_capability": get_device_capability,
    f"{NPU}.streams.Event": Event,
    f"{NPU}.streams.Stream": Stream,
    f"{NPU}.random.manual_seed": manual_seed,
    f"{NPU}.random.manual_seed_all": manual_seed_all,
    f"{NPU}.random.initial_seed": initial_seed,
    f"{NPU}.random.seed": seed,
    f"{NPU}.random.seed_all": seed,
    f"{NPU}.random.get_rng_state": get_rng_state,
    f"{NPU}.random.set_rng_state": set_rng_state,
    f"{NPU}.random.get_rng_state_all": get_rng_state_all,
    f"{NPU}.random.set_rng_state_all": set_rng_state_all,
    f"{NPU}.autocast_utils.get_amp_supported_dtype": returns([torch.float16, torch.bfloat16]),
    f"{NPU}.autocast_utils.is_autocast_enabled": lambda: torch.is_autocast_enabled("npu"),
    f"{NPU}.autocast_utils.get_autocast_dtype": lambda: torch.get_autocast_dtype("npu"),
    f"{NPU}.autocast_utils.set_autocast_enabled": functools.partial(
        torch.set_autocast_enabled, "npu"
    ),
    f"{NPU}.autocast_utils.set_autocast_dtype": functools.partial(torch.set_autocast_dtype, "npu"),
    f"{NPU}.npu_config.set_compile_mode": set_compile_mode,
    f"{NPU}.npu_config.set_option": set_option,
    f"{NPU}.config": Settings(allow_internal_format=False),
    f"{NPU}.matmul": Settings(allow_hf32=False),
    f"{NPU}.conv": Settings(allow_hf32=True),
    f"{NPU}.amp.autocast_mode.autocast": Autocast,
    f"{NPU}.amp.autocast_mode.custom_fwd": functools.partial(
        torch.amp.custom_fwd, device_type="npu"
    ),
    f"{NPU}.amp.autocast_mode.custom_bwd": functools.partial(
        torch.amp.custom_bwd, device_type="npu"
    ),
    f"{NPU}.amp.grad_scaler.GradScaler": GradScaler,
    f"{NPU}.mstx.mstx": Mstx,
    f"{NPU}.mstx.annotate": Annotate,
    "torch_npu.distributed.distributed_c10d.is_hccl_available": returns(True),
    "torch_npu.npu_fusion_attention": npu_fusion_attention,
}
# Names torch_npu binds without exporting them (not in the generated public API) that CUDA code
# reaches through torch.cuda's twins: model-parallel RNG trackers queue their state setter with
# _lazy_call and index default_generators. Each is checked against the wheel's names by a test.
EMULATED_PRIVATE: dict[str, Any] = {
    f"{NPU}._lazy_call": lazy_call,
    f"{NPU}._lazy_init": NOTHING,
    f"{NPU}.default_generators": default_generators,  # a tuple, built when installed
}
# Nothing is allocated on an npu: its memory counters stay at zero and there is no cache to empty.
MEMORY_COUNTERS = "memory_allocated max_memory_allocated memory_reserved max_memory_reserved"
MEMORY_COUNTERS += " memory_cached max_memory_cached"
MEMORY_RESETS = "empty_cache reset_peak_memory_stats reset_max_memory_allocated"
MEMORY_RESETS += " reset_max_memory_cached reset_accumulated_memory_stats"
EMULATED.update({f"{NPU}.memory.{name}": returns(0) for name in MEMORY_COUNTERS.split()})
EMULATED.update({f"{NPU}.memory.{name}": NOTHING for name in MEMORY_RESETS.split()})
EMULATED[f"{NPU}.memory.memory_stats"] = lambda device=None: {}
EMULATED.update(EMULATED_PROFILER)
EMULATED.update({f"{NPU}.{name}": AsIs(legacy) for name, legacy in legacy_types.TYPES.items()})
EMULATED.update(EMULATED_OPTIMIZERS)
