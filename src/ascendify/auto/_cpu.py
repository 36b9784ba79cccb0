"""The CPU stand-ins for CUDA-only objects: host-clock events, no-op streams, honest answers about the host.

CPU kernels run synchronously on the calling thread, so a host clock read at ``record()`` measures exactly
what a CUDA event pair measures, and synchronisation points have nothing to wait for.
"""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import psutil
import torch

from ascendify.auto._devicemap import DeviceMap, Factory


class CudaGraphUnavailableError(RuntimeError):
    """CUDA graph capture has no honest CPU counterpart."""


_GRAPH_MESSAGE = (
    "{name}: CUDA graph capture/replay has no CPU counterpart, and replaying a captured region cannot be "
    "emulated faithfully on the CPU (ascendify runs on the CPU because no NPU or CUDA device was found). "
    "Guard graph code with torch.cuda.is_available(), which is False here, or use "
    "torch.cuda.make_graphed_callables, which runs the callables eagerly on the CPU."
)


class HostClockEvent:
    """``torch.cuda.Event`` on the CPU: ``record()`` reads the host clock; ``elapsed_time`` is in ms."""

    def __init__(
        self,
        enable_timing: bool = False,
        blocking: bool = False,
        interprocess: bool = False,
        external: bool = False,
    ) -> None:
        self.enable_timing = enable_timing
        self._recorded_ns: int | None = None

    # The event lives where the redirected work runs (``torch.Event("cuda:0").device``).
    device = torch.device("cpu")

    def record(self, stream: Any = None) -> None:
        self._recorded_ns = time.perf_counter_ns()

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        """Nothing to wait for: CPU work is done when the call that queued it returns."""

    def wait(self, stream: Any = None) -> None:
        """Nothing to wait for (see ``synchronize``)."""

    def elapsed_time(self, end_event: HostClockEvent) -> float:
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._recorded_ns is None or end_event._recorded_ns is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event._recorded_ns - self._recorded_ns) / 1e6

    def __repr__(self) -> str:
        return f"<ascendify host-clock event, recorded={self._recorded_ns is not None}>"


class NoOpStream:
    """``torch.cuda.Stream`` on the CPU: one in-order queue, so ordering calls have nothing to do."""

    device = torch.device("cpu")
    device_type = "cpu"
    device_index = -1
    priority = 0
    cuda_stream = 0
    stream_id = 0

    def __init__(self, device: Any = None, priority: int = 0, **_: Any) -> None:
        self.priority = priority

    def wait_event(self, event: Any) -> None:
        """Work is already ordered on the CPU."""

    def wait_stream(self, stream: Any) -> None:
        """Work is already ordered on the CPU."""

    def record_event(self, event: HostClockEvent | None = None) -> HostClockEvent:
        event = event if event is not None else HostClockEvent()
        event.record(self)
        return event

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        """Nothing to wait for."""

    def __enter__(self) -> NoOpStream:
        return self

    def __exit__(self, *exc_info: object) -> None:
        return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NoOpStream)

    def __hash__(self) -> int:
        return hash(NoOpStream)

    def __repr__(self) -> str:
        return "<ascendify no-op stream on cpu>"


DEFAULT_STREAM = NoOpStream()


@contextmanager
def stream_context(stream: Any = None) -> Iterator[None]:
    yield


class HostDeviceContext:
    """``torch.cuda.device(i)`` on the CPU: a context (and a class, for ``isinstance``) that selects nothing."""

    def __init__(self, device: Any) -> None:
        self.idx = -1

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc_info: object) -> None:
        return None


class MemoryFractions:
    """``set/get_per_process_memory_fraction`` on the CPU: checked as torch checks them, recorded, never
    enforced (host memory has no per-process cap to set)."""

    def __init__(self) -> None:
        self.fraction = 1.0  # one CPU device, whichever CUDA index the script names

    def set(self, original: Any, device_map: DeviceMap) -> Any:
        def set_per_process_memory_fraction(fraction: float, device: Any = None) -> None:
            if not isinstance(fraction, float):
                raise TypeError("Invalid type for fraction argument, must be `float`")
            if fraction < 0 or fraction > 1:
                raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
            self.fraction = fraction

        return set_per_process_memory_fraction

    def get(self, original: Any, device_map: DeviceMap) -> Any:
        def get_per_process_memory_fraction(device: Any = None) -> float:
            return self.fraction

        return get_per_process_memory_fraction


MEMORY_FRACTIONS = MemoryFractions()


class HostAllocations:
    """``caching_allocator_alloc/delete`` on the CPU: host memory held by a tensor until deleted
    (the CUDA originals refuse a CPU stream argument, and there is no CUDA allocator)."""

    def __init__(self) -> None:
        self.held: dict[int, torch.Tensor] = {}

    def alloc(self, original: Any, device_map: DeviceMap) -> Any:
        def caching_allocator_alloc(size: int, device: Any = None, stream: Any = None) -> int:
            block = torch.empty(size, dtype=torch.uint8)
            self.held[block.data_ptr()] = block
            return block.data_ptr()

        return caching_allocator_alloc

    def delete(self, original: Any, device_map: DeviceMap) -> Any:
        def caching_allocator_delete(mem_ptr: int) -> None:
            self.held.pop(mem_ptr, None)

        return caching_allocator_delete


HOST_ALLOCATIONS = HostAllocations()


def empty_snapshot() -> dict[str, list[Any]]:
    """What ``torch.cuda.memory._snapshot()`` returns where nothing is allocated on a device."""
    return {"segments": [], "device_traces": []}


def dump_snapshot(original: Any, device_map: DeviceMap) -> Any:
    def _dump_snapshot(filename: str = "dump_snapshot.pickle") -> None:
        with open(filename, "wb") as stream:
            pickle.dump(empty_snapshot(), stream)

    return _dump_snapshot


MEMORY_SUMMARY = (
    "ascendify.auto: running on the CPU; no CUDA memory is allocated, so every CUDA memory statistic "
    "is 0 (torch.cuda.memory_allocated() and the others answer 0).\n"
)


def returns(value: Any) -> Factory:
    def factory(original: Any, device_map: DeviceMap) -> Any:
        def stand_in(*args: Any, **kwargs: Any) -> Any:
            return value

        stand_in.__name__ = getattr(original, "__name__", "stand_in")
        stand_in.__doc__ = f"ascendify CPU stand-in: returns {value!r}."
        return stand_in

    return factory


def calls(replacement: Callable[..., Any]) -> Factory:
    """Drop the CUDA device argument and call a host-side equivalent."""

    def factory(original: Any, device_map: DeviceMap) -> Any:
        def stand_in(*args: Any, **kwargs: Any) -> Any:
            return replacement()

        stand_in.__name__ = getattr(original, "__name__", "stand_in")
        return stand_in

    return factory


def set_rng_state(original: Any, device_map: DeviceMap) -> Any:
    def set_rng_state(new_state: torch.Tensor, device: Any = "cuda") -> None:
        torch.set_rng_state(new_state)

    return set_rng_state


def seed_cpu_generator(original: Any, device_map: DeviceMap) -> Any:
    def manual_seed(seed: int) -> None:
        torch.default_generator.manual_seed(int(seed))

    return manual_seed


def call_now(cb: Callable[[], Any], *args: Any, **kwargs: Any) -> None:
    """torch.cuda._lazy_call on the CPU: there is nothing to initialise first."""
    cb()


def constant(value: Any) -> Factory:
    return lambda original, device_map: value


def raises_graph_error(original: Any, device_map: DeviceMap) -> Any:
    name = f"torch.cuda.{getattr(original, '__name__', 'graph')}"

    def unavailable(*args: Any, **kwargs: Any) -> Any:
        raise CudaGraphUnavailableError(_GRAPH_MESSAGE.format(name=name))

    unavailable.__name__ = getattr(original, "__name__", "unavailable")
    return unavailable


def eager_callables(original: Any, device_map: DeviceMap) -> Any:
    def make_graphed_callables(callables: Any, sample_args: Any, *args: Any, **kwargs: Any) -> Any:
        """Graphing only removes launch overhead; on the CPU the callables themselves are the result."""
        return callables

    return make_graphed_callables


def device_properties() -> SimpleNamespace:
    return SimpleNamespace(
        name="cpu",
        total_memory=psutil.virtual_memory().total,
        major=0,
        minor=0,
        multi_processor_count=os.cpu_count() or 1,
        is_integrated=True,
    )


def host_memory_info() -> tuple[int, int]:
    memory = psutil.virtual_memory()
    return (memory.available, memory.total)


def tensor_cuda(original: Any, device_map: DeviceMap) -> Any:
    to_device = torch._C.TensorBase.to
    cpu = torch.device("cpu")

    def cuda(
        self: torch.Tensor,
        device: Any = None,
        non_blocking: bool = False,
        memory_format: torch.memory_format = torch.preserve_format,
    ) -> torch.Tensor:
        return to_device(self, cpu, non_blocking=non_blocking, memory_format=memory_format)

    return cuda


def module_cuda(original: Any, device_map: DeviceMap) -> Any:
    def cuda(self: torch.nn.Module, device: Any = None) -> torch.nn.Module:
        return self.cpu()

    return cuda


def pin_memory(original: Any, device_map: DeviceMap) -> Any:
    def pin_memory(self: torch.Tensor, device: Any = None) -> torch.Tensor:
        """Pinning is for copies to an accelerator; on the CPU the tensor is already where it goes."""
        return self

    return pin_memory


def by_device(host_class: type) -> Factory:
    """``torch.Event``/``torch.Stream``: CUDA devices get the host stand-in, others the real class."""

    def factory(original: Any, device_map: DeviceMap) -> Any:
        return device_dispatching_class(original, host_class)

    return factory


def device_dispatching_class(original: type, host_class: type) -> type:
    """A drop-in for a torch class whose instances for a CUDA device are ``host_class`` objects.

    ``isinstance(x, torch.Event)`` keeps working for objects made before or after patching.
    """

    class _Dispatching(type(original)):  # type: ignore[misc]
        def __instancecheck__(cls, instance: object) -> bool:
            return isinstance(instance, (original, host_class))

        def __call__(cls, device: Any = None, *args: Any, **kwargs: Any) -> Any:
            if _is_cuda(device):
                return host_class(*args, **kwargs)
            if device is None:
                return original(*args, **kwargs)
            return original(device, *args, **kwargs)

    return _Dispatching(original.__name__, (original,), {"__module__": original.__module__})


def _is_cuda(device: Any) -> bool:
    if isinstance(device, str):
        return device.split(":")[0] == "cuda"
    return isinstance(device, torch.device) and device.type == "cuda"


def legacy_tensor_type(name: str) -> Factory:
    """``torch.cuda.FloatTensor`` -> ``torch.FloatTensor``; doubles stay doubles (the CPU has float64)."""
    return lambda original, device_map: getattr(torch, name)


def no_op(original: Any, device_map: DeviceMap) -> Any:
    return returns(None)(original, device_map)
