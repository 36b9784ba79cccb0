"""The ``npu`` device on a CPU-only torch: npu names parse, tensors placed on npu live on the CPU.

torch accepts ``"npu"`` once privateuse1 is renamed and a device module and hooks are registered,
but has no kernels for it. So placement is redirected: a torch-function mode rewrites npu devices
given to factories (``device=``) and ``Tensor.to`` into the CPU, checkpoints saved on npu load
onto the CPU, and the ``hccl`` backend is gloo. Every computation is the CPU's own, so results are
bit for bit those of a CPU run.
"""

from __future__ import annotations

import functools
import types
from typing import Any

import torch
import torch.distributed as dist
from torch.overrides import TorchFunctionMode
from torch.utils import _device as default_device
from torch.utils.backend_registration import (
    generate_methods_for_privateuse1_backend,
    rename_privateuse1_backend,
)

from _npu_standin import legacy_types

HOST = torch.device("cpu")


def is_npu(device: object) -> bool:
    if isinstance(device, torch.device):
        return device.type == "npu"
    return isinstance(device, str) and device.partition(":")[0] == "npu"


def on_host(value: Any) -> Any:
    return HOST if is_npu(value) else value


class PlaceNpuOnHost(TorchFunctionMode):
    """Rewrites npu placement into CPU placement for every torch call of the thread."""

    def __torch_function__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        if is_npu(kwargs.get("device")):
            kwargs = {**kwargs, "device": HOST}
        elif (
            is_npu(default_device.CURRENT_DEVICE) and func in default_device._device_constructors()
        ):
            # torch.set_default_device("npu") / `with torch.device("npu")`: torch keeps its mode
            # below this one, so it would add the npu device after this rewrite.
            kwargs = {**kwargs, "device": HOST}
        if func is torch.Tensor.to:
            args = tuple(on_host(arg) for arg in args)
        return func(*args, **kwargs)


class NpuHooks(torch._C._acc.PrivateUse1Hooks):
    """What torch asks of a registered backend: it is there and built."""

    def is_available(self) -> bool:
        return True

    def has_primary_context(self, device_index: int) -> bool:
        return True

    def is_built(self) -> bool:
        return True


class NpuDeviceGuard(torch._C._acc.DeviceGuard):
    def type_(self) -> Any:
        return torch._C._autograd.DeviceType.PrivateUse1


def _restore_npu_on_host(storage: Any, location: str) -> Any:
    """Checkpoint storages tagged (or mapped) ``npu[:N]`` load onto the CPU."""
    return storage if is_npu(location) else None


def _no_tag(storage: Any) -> None:
    return None


def _gloo_for_hccl(store: Any, rank: int, size: int, timeout: Any) -> Any:
    return dist.ProcessGroupGloo(store, rank, size, timeout)


def _tensor_npu(
    self: torch.Tensor, device: Any = None, non_blocking: bool = False, **kwargs: Any
) -> torch.Tensor:
    """torch's generated ``Tensor.npu`` re-dispatches to torch-function modes from inside one, out of
    the placement mode's reach; this one goes through ``Tensor.to``, which the mode sees."""
    target = (
        torch.device("npu", device) if isinstance(device, int) else torch.device(device or "npu")
    )
    return self.to(target, non_blocking=non_blocking, **kwargs)


def _record_stream_on_host(original: Any, npu_module: types.ModuleType) -> Any:
    """Recording an npu stream on a tensor: the CPU's program order already keeps it alive."""

    def record_stream(self: torch.Tensor, stream: Any) -> None:
        if not isinstance(stream, npu_module.Stream):
            original(self, stream)

    return record_stream


def _pinned_on_host(self: torch.Tensor, device: Any = None) -> torch.Tensor:
    """There is no page-locked memory to stage through: the tensor is already where copies go."""
    return self


def _ddp_without_npu_ids(original: Any) -> Any:
    """DDP over npu ids: the modules are on the CPU, where DDP takes no device ids."""

    def __init__(self: Any, module: Any, device_ids: Any = None, output_device: Any = None,
                 *args: Any, **kwargs: Any) -> None:  # fmt: skip
        if _names_npu(device_ids) or _names_npu([output_device]):
            device_ids, output_device = None, None
        original(self, module, device_ids, output_device, *args, **kwargs)

    return __init__


def _collective_without_npu_devices(original: Any) -> Any:
    """init_process_group(device_id=npu) and barrier(device_ids=[...]) bind the group to the npu
    device, where torch itself would then place tensors; the group's tensors are on the CPU."""

    @functools.wraps(original)
    def call(*args: Any, **kwargs: Any) -> Any:
        if is_npu(kwargs.get("device_id")):
            kwargs["device_id"] = None
        if _names_npu(kwargs.get("device_ids")):
            kwargs["device_ids"] = None
        return original(*args, **kwargs)

    return call


def _names_npu(devices: Any) -> bool:
    return any(isinstance(d, int) or is_npu(d) for d in devices or [])


def activate(npu_module: types.ModuleType) -> None:
    """Make ``npu`` a device of this process whose tensors live on the CPU."""
    if torch._C._get_privateuse1_backend_name() == "npu":
        return
    _register_device(npu_module)
    # Pushed once and never popped: it rewrites every torch call of the importing thread.
    PlaceNpuOnHost().__enter__()  # type: ignore[no-untyped-call]
    torch.serialization.register_package(0, _no_tag, _restore_npu_on_host)
    _place_tensor_methods_on_host(npu_module)
    _accelerator_calls_on_npu(npu_module)
    if dist.is_available():
        _distributed_on_gloo()


def _register_device(npu_module: types.ModuleType) -> None:
    """As torch_npu registers its backend (hooks and guard from Python: there is no C++ side)."""
    rename_privateuse1_backend("npu")
    # torch.manual_seed asks every device module this private question before seeding it.
    npu_module._is_in_bad_fork = lambda: False  # type: ignore[attr-defined]
    torch._register_device_module("npu", npu_module)  # type: ignore[no-untyped-call]
    torch._C._acc.register_python_privateuseone_hook(NpuHooks())
    torch._C._acc.register_python_privateuseone_device_guard(NpuDeviceGuard())
    generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True)


def _place_tensor_methods_on_host(npu_module: types.ModuleType) -> None:
    torch.Tensor.npu = _tensor_npu  # type: ignore[attr-defined]
    torch.Tensor.record_stream = _record_stream_on_host(  # type: ignore[method-assign]
        torch.Tensor.record_stream, npu_module
    )
    torch.Tensor.type = legacy_types.tensor_type(torch.Tensor.type)  # type: ignore[method-assign]
    torch.Tensor.pin_memory = _pinned_on_host  # type: ignore[method-assign,assignment]


# torch.accelerator calls that torch answers through a backend's C++ device guard and allocator,
# which torch_npu has and the stand-in's Python hooks cannot provide.
_ACCELERATOR_CALLS = (
    "synchronize", "empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved",
    "max_memory_reserved", "reset_peak_memory_stats",
)  # fmt: skip


def _accelerator_calls_on_npu(npu_module: types.ModuleType) -> None:
    """``torch.accelerator.synchronize()`` and the memory counters: answered by the npu module."""
    for name in _ACCELERATOR_CALLS:
        if hasattr(torch.accelerator, name):
            setattr(torch.accelerator, name, getattr(npu_module, name))


def _distributed_on_gloo() -> None:
    dist.Backend.register_backend("hccl", _gloo_for_hccl, devices=["cpu", "npu"])
    for name in ("init_process_group", "barrier"):
        function = _collective_without_npu_devices(getattr(dist, name))
        setattr(dist, name, function)
        setattr(dist.distributed_c10d, name, function)
    ddp = torch.nn.parallel.DistributedDataParallel
    ddp.__init__ = _ddp_without_npu_ids(ddp.__init__)  # type: ignore[method-assign]
