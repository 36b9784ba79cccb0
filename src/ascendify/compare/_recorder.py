"""The recorder that ``compare dump`` arms in every process of the program that imports torch.

Armed by :mod:`ascendify.compare._startup` right after the program's ``import torch``; the program
is not edited. Global module hooks see every ``torch.nn.Module`` call; ``torch.autograd.backward``
is wrapped to see the loss (the tensor ``backward()`` is called on, unscaled when a ``GradScaler``
scaled it); global optimizer hooks see the gradient norm and end a step.

Cheap on purpose: a tensor's statistics are one small vector computed on its own device by a few
kernels, kept there until the step ends; then the step's vectors are moved to the host at once
(one synchronisation per step) and written as JSON lines. After the last recorded step every
hook is removed and every wrapped function restored.

``--level api`` and ``--nan-check`` also install a torch function mode, which sees every torch
function, tensor method and ``torch.nn.functional`` call: each operator call is recorded inside
the module that made it, and with ``--nan-check`` the first operator whose output holds a NaN or
inf ends the program (every step, not only the recorded ones), with what it was and where.
"""

from __future__ import annotations

import atexit
import functools
import json
import math
import os
import re
import sys
import threading
import traceback
import weakref
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import torch
from torch import nn
from torch.overrides import TorchFunctionMode, resolve_name
from torch.utils.hooks import RemovableHandle

import ascendify
from ascendify.compare.records import (
    API,
    FORWARD,
    NAN_CHECK,
    Record,
    TensorStats,
    rank_file,
    record_line,
    tensors_file,
)
from ascendify.compare.settings import DumpSettings

# Wrappers whose own path would prefix every path of the model they wrap (DDP's "module.").
WRAPPED_BY = {"DistributedDataParallel": "module", "DataParallel": "module", "OptimizedModule": "_orig_mod"}  # fmt: skip
_EMPTY = [math.nan, math.nan, math.nan, 0.0, 0.0, 0.0]
# Operators that compute nothing new: metadata, views and copies of the same values, autograd
# bookkeeping, uninitialised memory (torch.empty may hold NaN). Skipping them keeps --level api's
# cost and its records to the arithmetic.
_NOT_COMPUTING = frozenset((
    "size", "dim", "numel", "stride", "is_floating_point", "is_contiguous", "data_ptr",
    "element_size", "__len__", "__bool__", "__index__", "__int__", "__float__", "item", "tolist",
    "__repr__", "__format__", "__hash__", "__reduce_ex__", "__deepcopy__", "__setstate__",
    "__getstate__", "__array__", "numpy", "detach", "detach_", "requires_grad_", "register_hook",
    "retain_grad", "backward", "view", "view_as", "reshape", "reshape_as", "transpose",
    "permute", "t", "contiguous", "expand", "expand_as", "flatten", "unflatten", "squeeze",
    "unsqueeze", "__getitem__", "__setitem__", "split", "chunk", "unbind", "narrow", "select",
    "clone", "new_empty", "new_zeros", "new_ones", "new_full", "empty_like", "zeros_like",
    "ones_like", "full_like", "empty", "empty_strided", "new_empty_strided", "resize_", "set_",
))  # fmt: skip
FLOAT16_MAX = 65504.0
NAN_EXIT_CODE = 65  # sysexits' EX_DATAERR: the program's data went bad, not the program
# What --stop-after leaves the program's finally blocks, atexit handlers and threads before the hard exit.
STOP_GRACE_S = 10.0


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _tensors(value: Any, found: list[torch.Tensor]) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        found.append(value)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _tensors(item, found)
    elif isinstance(value, dict):
        for item in value.values():
            _tensors(item, found)
    return found


def _nonfinite_on_device(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.isnan(x).sum(dtype=torch.float32), torch.isinf(x).sum(dtype=torch.float32)


def _nonfinite(x: torch.Tensor) -> list[float]:
    return [float(count) for count in _nonfinite_on_device(x)]


def _measurable(tensor: torch.Tensor) -> bool:
    return (
        tensor.layout == torch.strided and tensor.device.type != "meta" and not tensor.is_complex()
    )


@dataclass
class _Tensor:
    """A tensor's statistics as they are before the step's single move to the host."""

    dtype: str
    shape: tuple[int, ...]
    # min, max, mean, norm, nan, inf: on the host, or on the tensor's device until the step ends
    vector: list[float] | torch.Tensor | None
    sample: torch.Tensor | None = None
    where: tuple[int, int] | None = None  # the sample's place in the tensors file, once written
    requires_grad: bool = False


@dataclass
class _Pending:
    step: int
    kind: str
    path: str
    call: int
    slot: int
    start: int
    order: int
    inputs: list[_Tensor]
    outputs: list[_Tensor]
    module_class: str = ""  # a module call's class (msprobe's names carry it)


@dataclass
class _Call:
    module: nn.Module
    path: str
    start: int
    inputs: list[_Tensor] | None  # None: the path is not recorded


@dataclass
class _Names:
    """Module and parameter paths, from each top-level module's named_modules()."""

    paths: dict[int, str] = field(default_factory=dict)
    parameters: dict[int, str] = field(default_factory=dict)
    labels: Counter[str] = field(default_factory=Counter)
    roots: dict[int, str] = field(default_factory=dict)  # id of a root -> prefix of its paths

    def index(self, root: nn.Module) -> None:
        inner = root
        while type(inner).__name__ in WRAPPED_BY and isinstance(
            getattr(inner, WRAPPED_BY[type(inner).__name__], None), nn.Module
        ):
            self.paths.setdefault(id(inner), type(inner).__name__)
            inner = getattr(inner, WRAPPED_BY[type(inner).__name__])
        prefix = self.roots.get(id(root))
        label = type(inner).__name__
        if prefix is None:
            self.labels[label] += 1
            if self.labels[label] > 1:
                label = f"{label}#{self.labels[label]}"
            # The first model with children gives bare paths (blocks.1.norm); others their class's.
            has_children = next(inner.children(), None) is not None
            main = has_children and not any(p == "" for p in self.roots.values())
            prefix = self.roots[id(root)] = "" if main else f"{label}."
        for name, module in inner.named_modules():
            self.paths.setdefault(id(module), f"{prefix}{name}" if name else label)
        for name, parameter in inner.named_parameters():
            self.parameters.setdefault(id(parameter), f"{prefix}{name}")


class Recorder:
    def __init__(self, settings: DumpSettings, directory: Path, rank: int) -> None:
        self.settings = settings
        self.directory = directory
        self.rank = rank
        self.owner = os.getpid()  # forked workers inherit the hooks; only the owner writes
        self.step = 0
        self.tick = 0  # events (call starts and ends) in this step: the execution order
        self.calls: Counter[tuple[str, str]] = Counter()
        self.stack: list[_Call] = []
        self.pending: list[_Pending] = []
        self.measured: dict[int, tuple[weakref.ref[torch.Tensor], int, _Tensor]] = {}
        self.names = _Names()
        self.reindexed: set[int] = set()  # roots indexed again this step for a module not found
        self.wanted: dict[str, bool] = {}
        self.pattern = re.compile(settings.modules) if settings.modules else None
        self.optimizer_created = False
        self.scaled: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
        self.header: dict[str, Any] = {}
        self.records_file: TextIO | None = None
        self.tensors_offset = 0
        self.handles: list[RemovableHandle] = []
        self.restore: list[Callable[[], None]] = []
        self.armed = False
        # False after the recorded steps while --nan-check still watches, or from the start
        self.recording = settings.record
        self.busy = False  # the recorder's own torch calls: not operators of the program
        self.operator_mode: _OperatorMode | None = None
        self.api_pattern = re.compile(settings.apis) if settings.apis else None
        self.api_names: dict[Any, str | None] = {}

    # -- arming ---------------------------------------------------------------------------------

    def arm(self) -> None:
        from torch.nn.modules import module as module_hooks
        from torch.optim import optimizer as optimizer_hooks

        self.handles = [
            module_hooks.register_module_forward_pre_hook(self._before_call),
            module_hooks.register_module_forward_hook(self._after_call, with_kwargs=True),
            optimizer_hooks.register_optimizer_step_pre_hook(self._before_optimizer_step),
            optimizer_hooks.register_optimizer_step_post_hook(self._after_optimizer_step),
        ]
        self._wrap(torch.autograd, "backward", self._wrapped_backward)
        self._wrap(torch.amp.GradScaler, "scale", self._wrapped_scale)
        self._wrap(torch.optim.Optimizer, "__init__", self._wrapped_optimizer_init)
        if self.settings.level == "api" or self.settings.nan_check:
            self.operator_mode = _OperatorMode(self)
            self.operator_mode.__enter__()  # type: ignore[no-untyped-call]
        self.armed = True
        atexit.register(self.close)

    def _wrap(self, owner: Any, name: str, make: Callable[[Any], Any]) -> None:
        original = getattr(owner, name)
        setattr(owner, name, functools.wraps(original)(make(original)))
        self.restore.append(lambda: setattr(owner, name, original))

    def disarm(self) -> None:
        if not self.armed:
            return
        self.armed = False
        if self.operator_mode is not None:
            self.operator_mode.__exit__(None, None, None)  # type: ignore[no-untyped-call]
            self.operator_mode = None
        for handle in self.handles:
            handle.remove()
        for restore in self.restore:
            restore()
        self.handles.clear()
        self.restore.clear()
        self.stack.clear()

    def close(self) -> None:
        """At the end of the recorded steps, or of the program: write what is left, and stop."""
        self.disarm()
        if os.getpid() != self.owner:
            return
        if self.pending:
            self._flush()
        if self.records_file is not None:
            self.records_file.close()
            self.records_file = None

    # -- module calls ---------------------------------------------------------------------------

    def _before_call(self, module: nn.Module, args: tuple[Any, ...]) -> None:
        if not self.stack:
            self._top_level_call(module)
        path = self._path(module)
        self.tick += 1
        inputs = [self._tensor(t) for t in _tensors(args, [])] if self._wanted(path) else None
        self.stack.append(_Call(module, path, self.tick, inputs))

    def _after_call(
        self, module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any], output: Any
    ) -> None:
        while self.stack:  # a call that raised left its frame behind: drop it
            call = self.stack.pop()
            if call.module is module:
                break
        else:
            return
        self.tick += 1
        if call.inputs is not None:
            inputs = call.inputs + [self._tensor(t) for t in _tensors(kwargs, [])]
            results = _tensors(output, [])
            index = self._next_call(FORWARD, call.path)
            outputs = [self._tensor(t) for t in results]
            self.pending.append(
                _Pending(
                    self.step, FORWARD, call.path, index, 0, call.start, self.tick, inputs, outputs,
                    type(module).__name__,
                )
            )  # fmt: skip
            if self.settings.backward and torch.is_grad_enabled():
                for slot, result in enumerate(results):
                    if result.requires_grad:
                        result.register_hook(  # type: ignore[no-untyped-call]
                            functools.partial(self._on_grad, call.path, index, slot)
                        )
        if not self.stack:
            if not self.header:
                self._note_device(_tensors(output, []) or _tensors((args, kwargs), []))
            if self._steps_on_forward():
                self._end_step()

    def _top_level_call(self, module: nn.Module) -> None:
        if id(module) not in self.names.roots:
            self.names.index(module)

    def _note_device(self, tensors: list[torch.Tensor]) -> None:
        """At the end of the first top-level call (still inside its autocast region, if any): the
        device its output is on, and the dtype autocast runs that device in."""
        device = tensors[0].device if tensors else torch.device("cpu")
        autocast = None
        if torch.is_autocast_enabled(device.type):
            autocast = _dtype_name(torch.get_autocast_dtype(device.type))
        self.header = {"device": str(device), "autocast": autocast}

    def _path(self, module: nn.Module) -> str:
        path = self.names.paths.get(id(module))
        if path is not None:
            return path
        root = self.stack[0].module if self.stack else module
        if id(root) not in self.reindexed:  # a module added since: index the model again, once
            self.reindexed.add(id(root))
            self.names.index(root)
            path = self.names.paths.get(id(module))
        if path is None:  # made during the call: named after its caller
            parent = self.stack[-1].path if self.stack else ""
            path = f"{parent}.<{type(module).__name__}>"
        return path

    def _wanted(self, path: str) -> bool:
        if not self.recording:
            return False
        wanted = self.wanted.get(path)
        if wanted is None:
            wanted = self.wanted[path] = self.pattern is None or bool(self.pattern.search(path))
        return wanted

    def _next_call(self, kind: str, path: str) -> int:
        index = self.calls[(kind, path)]
        self.calls[(kind, path)] = index + 1
        return index

    def _tensor(self, tensor: torch.Tensor) -> _Tensor:
        """The tensor's statistics, measured once per step: a module's output is often its
        caller's output and the next module's input too (unless changed in place since)."""
        seen = self.measured.get(id(tensor))
        if seen is not None and seen[0]() is tensor and seen[1] == tensor._version:
            return seen[2]
        busy, self.busy = self.busy, True
        try:
            measured = self._measure(tensor)
        finally:
            self.busy = busy
        self.measured[id(tensor)] = (weakref.ref(tensor), tensor._version, measured)
        return measured

    def _measure(self, tensor: torch.Tensor) -> _Tensor:
        shape = tuple(tensor.shape)
        if not _measurable(tensor) or tensor.numel() == 0:
            return _Tensor(
                _dtype_name(tensor.dtype), shape, None, requires_grad=tensor.requires_grad
            )
        x = tensor.detach()
        if x.dtype != torch.float32:
            x = x.float()
        low, high = torch.aminmax(x)
        stats = torch.stack((low, high, x.mean(), torch.linalg.vector_norm(x)))
        vector: torch.Tensor | list[float]
        if x.device.type == "cpu":
            # The host has the figures already; NaN and inf show in them (NaN in the mean, inf in
            # min or max), so they are counted only when one is there: two passes saved.
            vector = stats.tolist()
            vector += _nonfinite(x) if not all(map(math.isfinite, vector)) else [0.0, 0.0]
        else:  # no synchronisation per tensor: counted on the device, moved at the step's end
            vector = torch.cat((stats, torch.stack(_nonfinite_on_device(x))))
        sample = None
        if self.settings.level == "tensors":
            stride = -(-x.numel() // self.settings.max_elements)
            sample = x.reshape(-1)[::stride].clone()
        return _Tensor(
            _dtype_name(tensor.dtype), shape, vector, sample, requires_grad=tensor.requires_grad
        )

    def _single(self, kind: str, path: str, tensor: torch.Tensor, slot: int = 0) -> None:
        if not self.recording:
            return
        self.tick += 1
        index = self._next_call(kind, path)
        self.pending.append(
            _Pending(self.step, kind, path, index, slot, self.tick, self.tick, [], [self._tensor(tensor)])
        )  # fmt: skip

    # -- operator calls (--level api, --nan-check) -----------------------------------------------

    def _api_name(self, func: Any) -> str | None:
        """The operator's name (torch.softmax, torch.Tensor.add, torch.nn.functional.gelu), or
        None for what is not recorded: metadata, views, property getters, --apis misses."""
        try:
            return self.api_names[func]
        except KeyError:
            pass
        except TypeError:  # an unhashable callable
            return None
        name: str | None = resolve_name(func) or getattr(func, "__qualname__", None)
        if name is not None:
            last = name.rpartition(".")[2]
            if last in _NOT_COMPUTING or last in ("__get__", "__set__"):
                name = None
            elif self.api_pattern is not None and not self.api_pattern.search(name):
                name = None if not self.settings.nan_check else name
        self.api_names[func] = name
        return name

    def operator_call(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        name = self._api_name(func)
        if name is None:
            return func(*args, **kwargs)
        module = self.stack[-1].path if self.stack else ""
        path = f"{module}:{name}"
        record = (
            self.settings.level == "api"
            and self._wanted(module)
            and (self.api_pattern is None or bool(self.api_pattern.search(name)))
        )
        inputs: list[_Tensor] = []
        start = self.tick
        if record:  # before the call: an in-place operator changes its input
            inputs = [
                self._tensor(t) for t in _tensors((args, kwargs), []) if t.is_floating_point()
            ]
            self.tick += 1
            start = self.tick
        result = func(*args, **kwargs)
        outputs = [t for t in _tensors(result, []) if t.is_floating_point()]
        if not outputs:
            return result
        if record:
            self.tick += 1
            measured = [self._tensor(t) for t in outputs]
            index = self._next_call(API, path)
            self.pending.append(
                _Pending(self.step, API, path, index, 0, start, self.tick, inputs, measured)
            )
        if self.settings.nan_check:
            self._check_finite(name, module, args, kwargs, outputs)
        return result

    def _check_finite(
        self, name: str, module: str, args: Any, kwargs: Any, outputs: list[torch.Tensor]
    ) -> None:
        busy, self.busy = self.busy, True
        try:
            bad = next((t for t in outputs if not _finite(t.detach())), None)
            if bad is None:
                return
            inputs = [t for t in _tensors((args, kwargs), []) if t.is_floating_point()]
            self._stop_on_nonfinite(name, module, bad, inputs)
        finally:
            self.busy = busy

    def _stop_on_nonfinite(
        self, name: str, module: str, bad: torch.Tensor, inputs: list[torch.Tensor]
    ) -> None:
        """Write what was found, say it, and end this rank: the launcher ends the others."""
        nan, inf = (int(count) for count in _nonfinite(bad.detach()))
        inputs_finite = all(bool(torch.isfinite(t.detach()).all()) for t in inputs)
        overflow = bad.dtype == torch.float16 and nan == 0 and inputs_finite
        stack = _user_stack()
        found = {
            "rank": self.rank,
            "step": self.step,
            "operator": name,
            "module": module,
            "dtype": _dtype_name(bad.dtype),
            "shape": list(bad.shape),
            "nan": nan,
            "inf": inf,
            "float16_overflow": overflow,
            "inputs_finite": inputs_finite,
            "inputs": [_row(self._measure(t)) for t in inputs],
            "where": stack[-1] if stack else None,
            "stack": stack,
        }
        what = (
            f"float16 overflow (|x| > {FLOAT16_MAX:g} became inf)"
            if overflow
            else f"{nan} NaN and {inf} inf of {bad.numel()} elements"
        )
        message = (
            f"ascendify compare --nan-check: rank {self.rank}, step {self.step}: operator {name} "
            f"in {module or 'no module'} produced {what}"
            + (f" at {found['where']}" if found["where"] else "")
            + ("; its inputs were finite" if inputs_finite else "; its inputs held NaN/inf already")
        )
        found["message"] = message
        _write_first(self.directory / NAN_CHECK, found)
        (self.directory / f"nan_check.rank{self.rank}.json").write_text(json.dumps(found))
        self._stop_recording()
        print(message, file=sys.stderr, flush=True)
        sys.stdout.flush()
        # Not SystemExit: the program's finally blocks would run collectives the other ranks
        # never join. The launcher sees the exit code and ends the other ranks.
        os._exit(NAN_EXIT_CODE)

    # -- backward, loss, optimizer steps ----------------------------------------------------------

    def _on_grad(self, path: str, call: int, slot: int, grad: torch.Tensor) -> None:
        if self.armed and self.recording:
            self.tick += 1
            self.pending.append(
                _Pending(self.step, "grad", path, call, slot, self.tick, self.tick, [], [self._tensor(grad)])
            )  # fmt: skip

    def _wrapped_backward(self, backward: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(tensors: Any, *args: Any, **kwargs: Any) -> Any:
            first = tensors if isinstance(tensors, torch.Tensor) else next(iter(tensors), None)
            if self.armed and isinstance(first, torch.Tensor):
                self._single("loss", "loss", self.scaled.get(id(first), (first, first))[1])
            return backward(tensors, *args, **kwargs)

        return wrapped

    def _wrapped_scale(self, scale: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(scaler: Any, outputs: Any) -> Any:
            scaled = scale(scaler, outputs)
            if isinstance(outputs, torch.Tensor) and isinstance(scaled, torch.Tensor):
                self.scaled[id(scaled)] = (scaled, outputs)  # both kept alive: ids stay unique
            return scaled

        return wrapped

    def _wrapped_optimizer_init(self, init: Callable[..., None]) -> Callable[..., None]:
        def wrapped(optimizer: Any, *args: Any, **kwargs: Any) -> None:
            self.optimizer_created = True
            init(optimizer, *args, **kwargs)

        return wrapped

    def _before_optimizer_step(self, optimizer: torch.optim.Optimizer, *_: Any) -> None:
        parameters = [
            p for group in optimizer.param_groups for p in group["params"]
            if p.grad is not None and not p.grad.is_sparse
        ]  # fmt: skip
        if not parameters or not self.recording:
            return
        self.busy = True
        try:
            norm = nn.utils.get_total_norm([p.grad for p in parameters])
        finally:
            self.busy = False
        self._single("grad_norm", "grad_norm", norm)
        if self.settings.backward:
            for number, parameter in enumerate(parameters):
                name = self.names.parameters.get(id(parameter), f"parameter{number}")
                assert parameter.grad is not None
                self._single("param_grad", name, parameter.grad)

    def _after_optimizer_step(self, *_: Any) -> None:
        if not self._steps_on_forward():
            self._end_step()

    def _steps_on_forward(self) -> bool:
        step_on = self.settings.step_on
        return step_on == "forward" or (step_on == "auto" and not self.optimizer_created)

    # -- writing --------------------------------------------------------------------------------

    def _end_step(self) -> None:
        if os.getpid() == self.owner:
            self._flush()
        self.step += 1
        self.tick = 0
        self.calls.clear()
        self.measured.clear()
        self.scaled.clear()
        self.reindexed.clear()
        if self.settings.steps and self.step >= self.settings.steps and self.recording:
            if self.settings.nan_check:  # the records end; the watch for NaN goes on
                self._stop_recording()
            else:
                self.close()
        if self.settings.stop_after and self.step >= self.settings.stop_after:
            self.close()
            # Every rank ends the same step, so every rank stops here: no collective is left
            # waiting. SystemExit runs the program's finally blocks and atexit handlers.
            if os.getpid() == self.owner:
                print(
                    f"ascendify compare: {self.step} step(s) recorded; ending the program "
                    "(--stop-after)",
                    file=sys.stderr,
                    flush=True,
                )
                _exit_after_grace()
                raise SystemExit(0)

    def _stop_recording(self) -> None:
        if os.getpid() == self.owner and self.pending:
            self._flush()
        self.recording = False
        self.pending.clear()
        if self.records_file is not None:
            self.records_file.close()
            self.records_file = None

    def _flush(self) -> None:
        busy, self.busy = self.busy, True
        try:
            self._write_pending()
        finally:
            self.busy = busy

    def _write_pending(self) -> None:
        by_device: dict[torch.device, list[torch.Tensor]] = defaultdict(list)
        for pending in self.pending:
            for tensor in (*pending.inputs, *pending.outputs):
                if isinstance(tensor.vector, torch.Tensor):
                    by_device[tensor.vector.device].append(tensor.vector)
        values: dict[int, list[float]] = {}
        for group in by_device.values():  # one move to the host per device and step
            for vector, row in zip(group, torch.stack(group).cpu().tolist(), strict=True):
                values[id(vector)] = row
        out = self._records_file()
        samples = self._open_tensors() if self.settings.level == "tensors" else None
        try:
            for pending in self.pending:
                out.write(record_line(self._record(pending, values, samples)))
        finally:
            if samples is not None:
                samples.close()
        out.flush()
        self.pending.clear()

    def _record(self, pending: _Pending, values: dict[int, list[float]], samples: Any) -> Record:
        def stats(tensor: _Tensor) -> TensorStats:
            vector = tensor.vector
            row = values[id(vector)] if isinstance(vector, torch.Tensor) else vector or _EMPTY
            if samples is not None and tensor.sample is not None and tensor.where is None:
                data = tensor.sample.cpu().numpy().astype("<f4").tobytes()
                samples.write(data)
                tensor.where = (self.tensors_offset, tensor.sample.numel())
                self.tensors_offset += len(data)
            low, high, mean, norm, nan, inf = row
            return TensorStats(
                tensor.dtype, tensor.shape, low, high, mean, norm, int(nan), int(inf), tensor.where,
                tensor.requires_grad,
            )  # fmt: skip

        return Record(
            self.rank, pending.step, pending.kind, pending.path, pending.call, pending.slot,
            pending.start, pending.order,
            tuple(stats(t) for t in pending.inputs), tuple(stats(t) for t in pending.outputs),
            pending.module_class,
        )  # fmt: skip

    def _open_tensors(self) -> Any:
        return (self.directory / tensors_file(self.rank)).open("ab")

    def _records_file(self) -> TextIO:
        if self.records_file is None:
            path = self.directory / rank_file(self.rank)
            if path.exists():  # a second process of this rank (spawned): a file of its own
                path = path.with_suffix(f".{os.getpid()}.jsonl")
            self.records_file = path.open("w", encoding="utf-8")
            self.records_file.write(json.dumps({"header": self._header()}) + "\n")
        return self.records_file

    def _header(self) -> dict[str, Any]:
        npu = sys.modules.get("torch_npu")
        return {
            "rank": self.rank,
            "world_size": int(os.environ.get("WORLD_SIZE", "1")),
            "pid": os.getpid(),
            "argv": sys.argv,
            "torch": torch.__version__,
            "torch_npu": getattr(npu, "__version__", None) if npu else None,
            "default_dtype": _dtype_name(torch.get_default_dtype()),
            "step_on": "forward" if self._steps_on_forward() else "optimizer",
            **self.header,
        }


class _OperatorMode(TorchFunctionMode):
    """Every torch operator call of the program passes through the recorder."""

    def __init__(self, recorder: Recorder) -> None:
        super().__init__()
        self.recorder = recorder

    def __torch_function__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        recorder = self.recorder
        if recorder.busy or not recorder.armed or os.getpid() != recorder.owner:
            return func(*args, **(kwargs or {}))
        return recorder.operator_call(func, args, kwargs or {})


def _finite(x: torch.Tensor) -> bool:
    """Whether ``x`` holds no NaN or inf: one reduction (a NaN or inf makes the sum one), and the
    exact test only when the sum overflowed."""
    if x.numel() == 0 or math.isfinite(float(x.sum(dtype=torch.float32))):
        return True
    return bool(torch.isfinite(x).all())


def _row(tensor: _Tensor) -> list[Any]:
    vector = tensor.vector
    values = vector.tolist() if isinstance(vector, torch.Tensor) else (vector or _EMPTY)
    return [tensor.dtype, list(tensor.shape), *values]


def _package_folder(module: Any) -> str:
    return os.path.dirname(os.path.realpath(str(module.__file__))) + os.sep


# The folders whose frames are not the program's own: torch's and ascendify's installed packages,
# found by their modules' files (a path that merely contains "/ascendify/", such as a user's
# clone of a project by that name, is the program's own).
_OWN_FOLDERS = (_package_folder(torch), _package_folder(ascendify))


@functools.lru_cache(maxsize=4096)
def _is_library_frame(filename: str) -> bool:
    return os.path.realpath(filename).startswith(_OWN_FOLDERS)


def _user_stack() -> list[str]:
    """``file:line in function`` of the program's own frames, outermost first (the frames of
    torch's and ascendify's own folders left out)."""
    return [
        f"{frame.filename}:{frame.lineno} in {frame.name}"
        for frame in traceback.extract_stack()
        if not _is_library_frame(frame.filename)
    ]


def _exit_after_grace() -> None:
    """End the process STOP_GRACE_S from now, whatever still runs: SystemExit waits for every
    non-daemon thread, and a program's own worker thread may never end."""

    def hard_exit() -> None:
        print(
            f"ascendify compare: the program had not ended {STOP_GRACE_S:g} s after --stop-after "
            "(a thread still ran); ending it",
            file=sys.stderr,
            flush=True,
        )
        sys.stdout.flush()
        os._exit(0)

    timer = threading.Timer(STOP_GRACE_S, hard_exit)
    timer.daemon = True
    timer.start()


def _write_first(path: Path, found: dict[str, Any]) -> None:
    """The dump's verdict is the first rank's to find one: later ranks' do not replace it."""
    try:
        with path.open("x", encoding="utf-8") as handle:
            json.dump(found, handle)
    except FileExistsError:
        pass


def arm(directory: Path) -> Recorder:
    settings = DumpSettings.read(directory)
    recorder = Recorder(settings, directory, int(os.environ.get("RANK", "0")))
    recorder.arm()
    return recorder
