"""Automatic migration at run time: CUDA calls go to the NPU (or the CPU) while an unmodified script runs.

    import ascendify.auto
    ascendify.auto.enable()      # or: import ascendify.transfer_to_npu
    ...
    ascendify.auto.disable()     # every patched attribute is restored

``python -m ascendify.auto script.py args...`` runs a script with the redirect enabled.
"""

from __future__ import annotations

from ascendify.auto._choice import DEVICES, DeviceChoice
from ascendify.auto._cpu import CudaGraphUnavailableError
from ascendify.auto._session import PlannedPatch, active_device, disable, enable, is_enabled, plan

__all__ = [
    "DEVICES",
    "CudaGraphUnavailableError",
    "DeviceChoice",
    "PlannedPatch",
    "active_device",
    "disable",
    "enable",
    "is_enabled",
    "plan",
]
