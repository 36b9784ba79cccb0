"""CUDA APIs whose NPU counterpart returns another kind of value (the value-semantics table).

Renaming such a call is not enough: code that reads the result as the CUDA API gives it (indexes a
capability, reads ``.major`` of the properties) raises on an NPU where the original ran. Each entry
says what differs and what stands in for the missing value, so that the migrated code keeps the
original's control flow: the value an old device gives, which no feature check passes.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ValueDifference:
    cuda: str  # the CUDA API, qualified
    field: str | None  # an attribute read on its result; None: the result itself
    differs: str  # what torch_npu gives instead, for the change list
    stand_in: str  # the value the migrated code uses where torch_npu gives none


# torch_npu 2.13.0 (the wheel's torch_npu/npu/utils.py): get_device_capability returns None unless
# TORCH_NPU_DEVICE_CAPABILITY ("major.minor") is set; the properties carry name, total_memory,
# L2_cache_size, cube_core_num and vector_core_num only.
PROPERTIES_LACK = (
    "torch_npu's device properties have only name, total_memory, L2_cache_size, "
    "cube_core_num and vector_core_num"
)
VALUE_DIFFERENCES: tuple[ValueDifference, ...] = (
    ValueDifference(
        "torch.cuda.get_device_capability",
        None,
        "torch_npu returns None unless TORCH_NPU_DEVICE_CAPABILITY is set",
        "(0, 0)",
    ),
    *(
        ValueDifference("torch.cuda.get_device_properties", field, PROPERTIES_LACK, "0")
        for field in ("major", "minor")
    ),
)

# Fields of torch_npu's device properties; any other read on them raises AttributeError.
NPU_DEVICE_PROPERTIES = frozenset(
    {"name", "total_memory", "L2_cache_size", "cube_core_num", "vector_core_num"}
)


def value_difference(qualified: str, field: str | None) -> ValueDifference | None:
    """The entry for a call of ``qualified`` read whole (``field`` None) or through ``field``."""
    for entry in VALUE_DIFFERENCES:
        if entry.cuda == qualified and entry.field == field:
            return entry
    return None


def differences_of(qualified: str) -> tuple[ValueDifference, ...]:
    """Every entry for calls of ``qualified`` (the result itself, and fields read on it)."""
    return tuple(entry for entry in VALUE_DIFFERENCES if entry.cuda == qualified)
