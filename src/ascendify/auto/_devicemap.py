"""How a CUDA device, device type, device list, map_location or backend argument reads on the chosen device.

Only values that name a CUDA device are touched: a string is redirected when it *is* a device spec
(``"cuda"``, ``"cuda:1"``), never because it contains "cuda" somewhere (a checkpoint path stays as written).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import Enum
from typing import Any

import torch
from torch.serialization import default_restore_location

from ascendify.targets.devices import BACKEND_NAMES, CUDA_DEVICE_TYPE

_CUDA_SPEC = re.compile(r"cuda(?::(\d+))?")
_CACHE_LIMIT = 1024
_CUDA_TYPE_PREFIX = "torch.cuda."


class ArgumentKind(str, Enum):
    """What a device-carrying argument holds, which decides how it is redirected."""

    DEVICE = "device"  # a device: str, torch.device or int index
    DEVICE_TYPE = "device_type"  # a device type string ("cuda")
    DEVICE_HINT = "device_hint"  # an optional placement hint; meaningless without an accelerator
    DEVICE_LIST = "device_list"  # DDP's device_ids
    MAP_LOCATION = "map_location"  # torch.load's map_location in all its forms
    BACKEND = "backend"  # a communication backend name ("nccl", "cuda:nccl,cpu:gloo")
    TENSOR_TYPE = "tensor_type"  # a legacy type name ("torch.cuda.FloatTensor")


# Keywords whose meaning differs from a plain device; any other device keyword is a DEVICE.
KEYWORD_KINDS: dict[str, ArgumentKind] = {
    "device_type": ArgumentKind.DEVICE_TYPE,
    "map_location": ArgumentKind.MAP_LOCATION,
    "device_ids": ArgumentKind.DEVICE_LIST,
    "output_device": ArgumentKind.DEVICE_HINT,
    "device_id": ArgumentKind.DEVICE_HINT,
    "pin_memory_device": ArgumentKind.DEVICE_HINT,
}

# Communication backends that replace NCCL when there is no NPU.
CPU_BACKEND_NAMES: dict[str, str] = {"nccl": "gloo", "NCCL": "gloo"}


# A replacement factory: (original object, device map) -> the object put in its place.
Factory = Callable[[Any, "DeviceMap"], Any]


class Drop:
    """Marker returned for a keyword that must not be passed on (e.g. DDP device_ids for a CPU module)."""

    def __repr__(self) -> str:
        return "DROP"


DROP = Drop()


def kind_of(keyword: str) -> ArgumentKind:
    return KEYWORD_KINDS.get(keyword, ArgumentKind.DEVICE)


class DeviceMap:
    """Redirects CUDA device arguments to ``target`` ("cpu" or "npu").

    On the CPU there is one device, so indices are dropped and placement hints disappear; on the NPU
    indices are kept (``cuda:1`` -> ``npu:1``).
    """

    def __init__(self, target: str) -> None:
        self.target = target
        self.keeps_index = target != "cpu"
        # On the NPU the target is spelled as a string: "npu" is a torch device type only once torch_npu
        # is imported, and planning (and its tests) must work without it.
        self._target_device: Any = torch.device(target) if target == "cpu" else target
        # str and torch.device values seen in device positions -> their redirect (read by the wrappers)
        self.known: dict[Any, Any] = {}
        self._backend_names = BACKEND_NAMES if self.keeps_index else CPU_BACKEND_NAMES

    def translator(self, kind: ArgumentKind) -> Callable[[Any], Any]:
        return {
            ArgumentKind.DEVICE: self.device,
            ArgumentKind.DEVICE_TYPE: self.device_type,
            ArgumentKind.DEVICE_HINT: self.hint,
            ArgumentKind.DEVICE_LIST: self.device_list,
            ArgumentKind.MAP_LOCATION: self.map_location,
            ArgumentKind.BACKEND: self.backend,
            ArgumentKind.TENSOR_TYPE: self.tensor_type,
        }[kind]

    # The hot path (Tensor.to): exact type checks and a dict hit; no regex after the first call.
    def device(self, value: Any) -> Any:
        value_type = type(value)
        if value_type is str or value_type is torch.device:
            mapped = self.known.get(value)
            if mapped is None:
                mapped = self._remember(value)
            return mapped
        if value_type is int:
            return self._indexed(value)
        return value

    def device_type(self, value: Any) -> Any:
        return self.target if value == CUDA_DEVICE_TYPE else value

    def hint(self, value: Any) -> Any:
        if not self.keeps_index and _names_cuda(value):
            return DROP
        return self.device(value)

    def device_list(self, value: Any) -> Any:
        if not isinstance(value, (list, tuple)):
            return value
        if not self.keeps_index:
            return DROP if any(_names_cuda(item) for item in value) else value
        return type(value)(self.device(item) for item in value)

    def map_location(self, value: Any) -> Any:
        if value is None:
            return _RestoreRedirect(self, None)
        if isinstance(value, dict):
            return {key: self.location(str(item)) for key, item in value.items()}
        if callable(value) and not isinstance(value, torch.device):
            return _RestoreRedirect(self, value)
        return self.device(value)

    def tensor_type(self, value: Any) -> Any:
        """``"torch.cuda.FloatTensor"`` -> ``"torch.FloatTensor"`` (CPU) or ``"torch.npu.FloatTensor"``."""
        if isinstance(value, str) and value.startswith(_CUDA_TYPE_PREFIX):
            prefix = "torch.npu." if self.keeps_index else "torch."
            return prefix + value[len(_CUDA_TYPE_PREFIX) :]
        return value

    def backend(self, value: Any) -> Any:
        """``nccl`` -> ``gloo`` (CPU) or ``hccl`` (NPU); ``cuda:nccl,cpu:gloo`` pair lists too."""
        if not isinstance(value, str):
            return value
        pairs = []
        for part in value.split(","):
            device, sep, name = part.rpartition(":")
            device = self.device_type(device) if sep else device
            name = self._backend_names.get(name, name)
            pair = f"{device}:{name}" if sep else name
            if pair not in pairs:
                pairs.append(pair)
        return ",".join(pairs)

    def location(self, value: str) -> str:
        """A serialized storage location (``"cuda:0"``) as it reads on the target."""
        mapped = self.device(value)
        return str(mapped) if isinstance(mapped, torch.device) else mapped

    def _remember(self, value: str | torch.device) -> Any:
        mapped = self._map_string(value) if isinstance(value, str) else self._map_device(value)
        if len(self.known) < _CACHE_LIMIT:
            self.known[value] = mapped
        return mapped

    def _map_string(self, value: str) -> Any:
        match = _CUDA_SPEC.fullmatch(value)
        if match is None:
            # "cpu" -> the device object when the target is the CPU: the same meaning, parsed once
            return self._target_device if value == str(self._target_device) else value
        index = match.group(1)
        return self._indexed(int(index)) if index is not None else self._target_device

    def _map_device(self, value: torch.device) -> Any:
        if value.type != CUDA_DEVICE_TYPE:
            return value
        if value.index is None:
            return self._target_device
        return self._indexed(value.index)

    def _indexed(self, index: int) -> Any:
        if self.keeps_index:
            return f"{self.target}:{index}"
        return self._target_device


def _names_cuda(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    if isinstance(value, torch.device):
        return value.type == CUDA_DEVICE_TYPE
    return isinstance(value, str) and _CUDA_SPEC.fullmatch(value) is not None


class _RestoreRedirect:
    """A map_location callable: storages saved on CUDA are restored on the target device.

    Wraps the user's own callable (if any); whatever it leaves to the default (``None``) is redirected.
    """

    def __init__(self, device_map: DeviceMap, user: Callable[[Any, str], Any] | None) -> None:
        self._device_map = device_map
        self._user = user

    def __call__(self, storage: Any, location: str) -> Any:
        if self._user is not None:
            restored = self._user(storage, location)
            if restored is not None:
                return restored
        target = self._device_map.location(location)
        if target == location:
            return None
        return default_restore_location(storage, target)  # type: ignore[no-untyped-call]
