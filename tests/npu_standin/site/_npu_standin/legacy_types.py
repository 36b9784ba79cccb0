"""torch.npu.FloatTensor and the other legacy tensor types, for ``.type(...)``, ``isinstance`` and
construction. Tensors placed on npu live on the CPU, so a tensor of the type's dtype is one."""

from __future__ import annotations

from typing import Any

import torch

NAMES = "Float Double Half BFloat16 Long Int Short Char Byte Bool"


class LegacyTensorType(type):
    host_type: Any

    def __instancecheck__(cls, instance: object) -> bool:
        return isinstance(instance, torch.Tensor) and instance.dtype == cls.host_type.dtype

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls.host_type(*args, **kwargs)


def legacy_type(name: str) -> LegacyTensorType:
    host_type = getattr(torch, name)
    return LegacyTensorType(name, (), {"host_type": host_type, "__module__": "torch.npu"})


TYPES = {f"{name}Tensor": legacy_type(f"{name}Tensor") for name in NAMES.split()}


def tensor_type(original: Any) -> Any:
    """``Tensor.type`` that also takes an npu legacy type (or its name): a dtype conversion."""

    def type_(
        self: torch.Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any
    ) -> Any:
        if isinstance(dtype, str) and dtype.startswith("torch.npu."):
            dtype = TYPES[dtype.rpartition(".")[2]]
        if isinstance(dtype, LegacyTensorType):
            return self.to(dtype.host_type.dtype, non_blocking=non_blocking)
        if dtype is None:
            return original(self)
        return original(self, dtype, non_blocking, **kwargs)

    return type_
