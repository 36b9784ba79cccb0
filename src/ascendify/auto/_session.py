"""The process-wide redirect: choose the device, plan the rows, apply and revert them."""

from __future__ import annotations

import os
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass

import torch

from ascendify.auto._choice import DEVICES, DeviceChoice, announce, choose_device
from ascendify.auto._devicemap import DeviceMap
from ascendify.auto._npu import npu_device_count
from ascendify.auto._patcher import Patcher, Replacement
from ascendify.auto._replace import unsupported_api_replacements
from ascendify.auto._resolve import (
    NotLoadedError,
    UnresolvedTargetError,
    loaded_owner,
    resolve_owner,
)
from ascendify.auto._table import Patch, attach, rows_for
from ascendify.auto._tune import apply_safe_tuning
from ascendify.errors import AscendifyError


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
    """What ``enable`` replaces on ``device``, without touching anything (no torch_npu needed).

    Imports the modules of every target (FSDP, ...), which ``enable`` itself defers.
    """

    _check_device(device)
    planned = []
    seen: set[tuple[int, str]] = set()
    for row in rows_for(device):
        try:
            landed, owner, name = attach(row, *resolve_owner(row.target, row.absent_ok))
        except (UnresolvedTargetError, ImportError):
            continue
        if (id(owner), name) not in seen:
            seen.add((id(owner), name))
            planned.append(PlannedPatch(landed.code, landed.target, landed.note))
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
    replaced_apis = unsupported_api_replacements(environ)  # ASCENDIFY_REPLACE_UNSUPPORTED=1
    if choice.device != "cuda":
        _fill_device_constructor_cache()
        ready, deferred = _replacements(choice.device)
        _State.patcher.apply([*ready, *replaced_apis], deferred)
    apply_safe_tuning(choice.device, environ)  # ASCENDIFY_TUNE=safe
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

    if device is not None:
        _check_device(device)
        environ = {**environ, "ASCENDIFY_DEVICE": device}
    return choose_device(environ, npu_device_count, torch.cuda.device_count)


def _replacements(
    device: str,
) -> tuple[list[Replacement], dict[str, Callable[[], list[Replacement]]]]:
    """Replacements for what is loaded now, and builders for the rest, keyed by the module they await."""

    device_map = DeviceMap(device)
    ready: list[Replacement] = []
    waiting: dict[str, list[Patch]] = {}
    for row in rows_for(device):
        try:
            ready.extend(_build(row, device, device_map))
        except NotLoadedError as missing:
            waiting.setdefault(missing.module, []).append(row)

    def builder(rows: list[Patch]) -> Callable[[], list[Replacement]]:
        return lambda: [r for row in rows for r in _build(row, device, device_map)]

    return ready, {module: builder(rows) for module, rows in waiting.items()}


def _build(row: Patch, device: str, device_map: DeviceMap) -> list[Replacement]:

    try:
        landed, owner, name = attach(row, *loaded_owner(row.target, row.absent_ok))
    except UnresolvedTargetError:
        return []  # not in this torch
    factory = landed.factory(device)
    if factory is None:
        return []
    original = getattr(owner, name, None)  # absent_ok: a name this torch lacks is added
    return [Replacement(landed.target, owner, name, factory(original, device_map))]


def _check_device(device: str) -> None:
    if device not in DEVICES:
        raise AscendifyError(f"unknown device {device!r}; use one of {', '.join(DEVICES)}")


# `with torch.device(...)` and set_default_device place tensors by checking the called factory against a
# set that torch builds once, on first use, and torch hands it the original factory. Built after
# patching, the set would hold the wrappers and place nothing; built now, it holds the originals.
def _fill_device_constructor_cache() -> None:
    from torch.utils._device import _device_constructors

    _device_constructors()
