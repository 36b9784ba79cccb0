"""The NPU side of the redirect. Everything that needs torch_npu is behind ``import_torch_npu``.

Factories here run only when the NPU backend is applied; planning the NPU patches (which targets, which
NPU names) needs no torch_npu, so it is tested on machines without an NPU.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ascendify.auto._callsite import warn_once_at_call_site
from ascendify.auto._devicemap import DeviceMap
from ascendify.auto._redirect import ArgumentRule, redirect_arguments
from ascendify.auto._resolve import resolve

# Libraries that have their own NPU branch: they must see the real torch.cuda.is_available() (False on an
# NPU host), or they take CUDA-only paths (accelerate choosing nccl, Triton choosing the NVIDIA driver).
TRUTHFUL_PACKAGES: frozenset[str] = frozenset(
    {"accelerate", "transformers", "peft", "trl", "deepspeed", "triton", "vllm", "vllm_ascend",
     "bitsandbytes", "xformers", "flash_attn", "diffusers", "lightning", "pytorch_lightning"}
)  # fmt: skip

DOUBLE_TENSOR_MESSAGE = (
    "torch.cuda.DoubleTensor is float32 on the NPU (the NPU has no float64 kernels for most "
    "operators); results may differ from a float64 run"
)


class NpuUnavailableError(RuntimeError):
    """torch_npu cannot be imported or sees no device."""


def import_torch_npu() -> ModuleType:
    """The one place torch_npu is imported."""
    try:
        return importlib.import_module("torch_npu")
    except Exception as error:  # torch_npu raises several kinds when CANN is missing or broken
        raise NpuUnavailableError(f"torch_npu cannot be imported: {error}") from error


def npu_device_count() -> int:
    """Visible NPUs, or 0 when torch_npu is missing, broken or sees none."""
    try:
        torch_npu = import_torch_npu()
        return int(torch_npu.npu.device_count())
    except Exception:
        return 0


def resolve_npu_name(qualified: str) -> Any:
    """``torch_npu.npu.NPUGraph`` -> the object (imports torch_npu)."""
    import_torch_npu()
    return resolve(qualified)


@dataclass(frozen=True)
class NpuObject:
    """Factory: the replacement is the torch_npu object named ``qualified`` (e.g. ``torch.Tensor.npu``)."""

    qualified: str
    arguments: ArgumentRule | None = None  # device arguments that still say "cuda" in user code

    def __call__(self, original: Any, device_map: DeviceMap) -> Any:
        found = resolve_npu_name(self.qualified)
        if self.arguments is None:
            return found
        return redirect_arguments(found, self.arguments, device_map, receiver=False)


def keep_values(
    function: Callable[..., Any], whole: Any = None, fields: Mapping[str, Any] | None = None
) -> Callable[..., Any]:
    """``function`` whose result reads as CUDA code expects (the value-semantics table): ``whole``
    where it returns None, and ``fields`` where the result lacks them."""

    @functools.wraps(function)
    def kept(*args: Any, **kwargs: Any) -> Any:
        value = function(*args, **kwargs)
        if value is None and whole is not None:
            return whole
        return _WithFields(value, fields) if fields else value

    return kept


class _WithFields:
    """A result with stand-ins for the fields it lacks (``major`` of NPU device properties)."""

    def __init__(self, value: Any, fields: Mapping[str, Any]) -> None:
        self._value = value
        self._fields = fields

    def __getattr__(self, name: str) -> Any:
        try:
            return getattr(self._value, name)
        except AttributeError:
            if name in self._fields:
                return self._fields[name]
            raise

    def __repr__(self) -> str:
        return repr(self._value)


@dataclass(frozen=True)
class KeptValueNpuObject(NpuObject):
    """Factory: the torch_npu function with :func:`keep_values` of its value differences."""

    whole: Any = None
    fields: tuple[tuple[str, Any], ...] = ()

    def __call__(self, original: Any, device_map: DeviceMap) -> Any:
        return keep_values(super().__call__(original, device_map), self.whole, dict(self.fields))


class ServedAttribute:
    """A module attribute served through the module's ``__getattr__``: every read calls ``read``."""

    def __init__(self, read: Callable[[], Any]) -> None:
        self.read = read


class WarnedAttribute(ServedAttribute):
    """A served attribute that warns each place that reads it."""

    def __init__(self, value: Any, message: str) -> None:
        super().__init__(self._warned_read)
        self.value = value
        self.message = message

    def _warned_read(self) -> Any:
        warn_once_at_call_site(self.message)
        return self.value


@dataclass(frozen=True)
class WarnedNpuObject(NpuObject):
    """Factory: the torch_npu object, served with a warning at every line that reads it."""

    message: str = ""

    def __call__(self, original: Any, device_map: DeviceMap) -> Any:
        return WarnedAttribute(resolve_npu_name(self.qualified), self.message)


@dataclass(frozen=True)
class LiveNpuAttribute:
    """Factory: the torch_npu attribute ``qualified``, read again at every use (torch_npu fills some of
    them, such as ``default_generators``, only when the NPU initialises)."""

    qualified: str

    def __call__(self, original: Any, device_map: DeviceMap) -> Any:
        resolve_npu_name(self.qualified)  # a missing name fails at enable, not at first use
        return ServedAttribute(lambda: resolve(self.qualified))


def claimed_availability(
    truth: Callable[[], bool], packages: frozenset[str] = TRUTHFUL_PACKAGES
) -> Callable[[], bool]:
    """``torch.cuda.is_available`` that says True to user code and the truth to listed libraries.

    The caller's top-level package decides, so a whole library is covered rather than a list of its
    functions, and nothing global is swapped during the call (safe with threads).
    """

    def is_available() -> bool:
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller.partition(".")[0] in packages:
            return truth()
        return True

    return is_available


def claims_available(original: Any, device_map: DeviceMap) -> Any:
    return claimed_availability(original)
