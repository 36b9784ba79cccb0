"""Automatic migration at run time: CUDA calls go to the NPU (or the CPU) while an unmodified script runs.

    import ascendify.auto
    ascendify.auto.enable()      # or: import ascendify.transfer_to_npu
    ...
    ascendify.auto.disable()     # every patched attribute is restored

``python -m ascendify.auto script.py args...`` runs a script with the redirect enabled.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from dataclasses import dataclass

from ascendify.auto._choice import DEVICES, DeviceChoice, announce, choose_device
from ascendify.auto._cpu import CudaGraphUnavailableError
from ascendify.auto._patcher import Patcher, Replacement
from ascendify.errors import AscendifyError

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


@dataclass(frozen=True)
class PlannedPatch:
    code: str
    target: str
    note: str


class _State:
    """The process-wide redirect: one patcher, and the choice it was applied for."""

    patcher = Patcher()
    active: DeviceChoice | None = None


def plan(device: str) -> tuple[PlannedPatch, ...]:
    """What ``enable`` replaces on ``device``, without touching anything (no torch_npu needed)."""
    from ascendify.auto._resolve import UnresolvedTargetError, resolve_owner
    from ascendify.auto._table import rows_for

    _check_device(device)
    planned = []
    seen: set[tuple[int, str]] = set()
    for row in rows_for(device):
        try:
            owner, name = resolve_owner(row.target)
        except (UnresolvedTargetError, ImportError):
            continue
        if (id(owner), name) not in seen:
            seen.add((id(owner), name))
            planned.append(PlannedPatch(row.code, row.target, row.note))
    return tuple(planned)


def enable(
    device: str | None = None, environ: MutableMapping[str, str] | None = None
) -> DeviceChoice:
    """Choose the device (``device``, else ``ASCENDIFY_DEVICE``, else NPU -> CUDA -> CPU) and patch.

    Calling it again while enabled changes nothing and returns the active choice.
    """
    environ = os.environ if environ is None else environ
    active = _State.active
    if active is not None:
        if device is not None and device != active.device:
            raise AscendifyError(
                f"ascendify.auto is already enabled for {active.device}; call disable() first"
            )
        return active
    choice = _choose(device, environ)
    if choice.device != "cuda":
        _State.patcher.apply(_replacements(choice.device))
    _State.active = choice
    announce(choice, environ)
    return choice


def disable() -> None:
    """Restore everything ``enable`` replaced. Safe to call when not enabled."""
    _State.patcher.revert()
    _State.active = None


def is_enabled() -> bool:
    return _State.active is not None


def active_device() -> str | None:
    return None if _State.active is None else _State.active.device


def _choose(device: str | None, environ: MutableMapping[str, str]) -> DeviceChoice:
    import torch

    from ascendify.auto._npu import npu_device_count

    if device is not None:
        _check_device(device)
        environ = {**environ, "ASCENDIFY_DEVICE": device}
    return choose_device(environ, npu_device_count, torch.cuda.device_count)


def _replacements(device: str) -> list[Replacement]:
    from ascendify.auto._devicemap import DeviceMap
    from ascendify.auto._resolve import resolve_owner
    from ascendify.auto._table import rows_for

    device_map = DeviceMap(device)
    targets = {planned.target for planned in plan(device)}
    replacements = []
    for row in rows_for(device):
        factory = row.factory(device)
        if row.target not in targets or factory is None:
            continue
        owner, name = resolve_owner(row.target)
        replacements.append(
            Replacement(row.target, owner, name, factory(getattr(owner, name), device_map))
        )
    return replacements


def _check_device(device: str) -> None:
    if device not in DEVICES:
        raise AscendifyError(f"unknown device {device!r}; use one of {', '.join(DEVICES)}")
