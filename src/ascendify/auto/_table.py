"""The one table of what the runtime redirect patches, per device.

Device and backend arguments come from the shared tables in :mod:`ascendify.targets.devices`; the
``torch.cuda`` names on the NPU come from :mod:`ascendify.targets.apis`. This module adds only what is
specific to running: the CPU stand-ins and the few NPU objects that are not same-name mirrors.

A row's factory receives the original object and the device map and returns the replacement. Rows for
a device without a factory are not applied on that device.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import torch

from ascendify.auto import _cpu, _npu
from ascendify.auto._devicemap import ArgumentKind, DeviceMap, Factory, kind_of
from ascendify.auto._redirect import ArgumentRule, redirect_arguments, redirect_constructor_class
from ascendify.auto._resolve import loaded_owner
from ascendify.targets import Safety, load_facts, npu_target
from ascendify.targets.devices import (
    ATTRIBUTE_RENAMES,
    BACKEND_PARAMETERS,
    DEVICE_PARAMETERS,
    METHOD_RENAMES,
)
from ascendify.targets.values import differences_of

CPU = "cpu"
NPU = "npu"


@dataclass(frozen=True)
class Patch:
    code: str
    # The attribute that is replaced ("torch.Tensor.to"); for a Python class, ``attach`` moves it to
    # the class's __init__ or __new__.
    target: str
    note: str
    cpu: Factory | None = None
    npu: Factory | None = None
    # The attribute may be missing from this torch build; the row then adds it (and disable removes it).
    absent_ok: bool = False

    def factory(self, device: str) -> Factory | None:
        return self.cpu if device == CPU else self.npu if device == NPU else None


# Device parameters the redirect deliberately leaves alone, with the reason (shown in the docs).
NOT_REDIRECTED: dict[str, str] = {
    "torch.device": "a bare torch.device('cuda') keeps its meaning; it is redirected where it is used",
}

# Receivers of the ".method" device parameters.
METHOD_RECEIVERS = ("torch.Tensor", "torch.nn.Module")

_DEVICE_FIRST = ArgumentRule(((0, ArgumentKind.DEVICE),), (("device", ArgumentKind.DEVICE),))

# Callables whose device-like arguments matter only at run time.
RUNTIME_ARGUMENT_RULES: dict[str, ArgumentRule] = {
    # `with torch.device("cuda"):` enters this context
    "torch.utils._device.DeviceContext": _DEVICE_FIRST,
    # t.type("torch.cuda.FloatTensor")
    ".type": ArgumentRule(((0, ArgumentKind.TENSOR_TYPE),), (("dtype", ArgumentKind.TENSOR_TYPE),)),
    # DistributedDataParallel(model, [local_rank], local_rank)
    "torch.nn.parallel.DistributedDataParallel": ArgumentRule(
        ((1, ArgumentKind.DEVICE_LIST), (2, ArgumentKind.DEVICE_HINT))
    ),
}

# torch.cuda functions taking a device: their torch_npu counterparts get the redirected device.
_SECOND_DEVICE = ArgumentRule(((1, ArgumentKind.DEVICE),), (("device", ArgumentKind.DEVICE),))
CUDA_FUNCTION_ARGUMENTS: dict[str, ArgumentRule] = {
    **dict.fromkeys(
        ("set_device", "synchronize", "get_device_name", "get_device_capability",
         "get_device_properties", "mem_get_info", "memory_stats", "memory_summary",
         "memory_allocated", "max_memory_allocated", "reset_max_memory_allocated",
         "memory_reserved", "max_memory_reserved", "reset_max_memory_cached",
         "reset_peak_memory_stats", "default_stream", "current_stream", "utilization",
         "get_rng_state", "device", "list_gpu_processes"),
        _DEVICE_FIRST,
    ),
    **dict.fromkeys(
        ("set_rng_state", "set_per_process_memory_fraction", "caching_allocator_alloc"), _SECOND_DEVICE
    ),
    "can_device_access_peer": ArgumentRule(
        ((0, ArgumentKind.DEVICE), (1, ArgumentKind.DEVICE)),
        (("device", ArgumentKind.DEVICE), ("peer_device", ArgumentKind.DEVICE)),
    ),
}  # fmt: skip

# Device-argument rows whose CPU behaviour is a stand-in rather than a redirect, with what it does.
_CPU_ARGUMENT_OVERRIDES: dict[str, tuple[Factory, str]] = {
    "torch.Event": (_cpu.by_device(_cpu.HostClockEvent), "CPU: a host-clock event for cuda"),
    "torch.Stream": (_cpu.by_device(_cpu.NoOpStream), "CPU: a no-op stream for cuda"),
    "torch.Tensor.pin_memory": (_cpu.pin_memory, "CPU: returns the tensor (nothing to pin for)"),
}


LEGACY_TENSOR_TYPES = (
    "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
    "ShortTensor", "IntTensor", "LongTensor", "BoolTensor",
)  # fmt: skip


def _cuda_runtime_rows() -> Iterator[Patch]:
    """CPU answers for torch.cuda queries and controls that would otherwise raise without CUDA."""
    yield Patch("AUTO201", "torch.cuda.is_available", "False on the CPU (there is no accelerator); "
                "True to user code on an NPU host, the truth to libraries with their own NPU branch",
                cpu=_cpu.returns(False), npu=_npu.claims_available)  # fmt: skip
    cpu_only = {
        "torch.cuda.current_device": (_cpu.returns(0), "device 0"),
        "torch.cuda.set_device": (_cpu.no_op, "nothing to select"),
        "torch.cuda.synchronize": (_cpu.no_op, "CPU work is synchronous"),
        "torch.cuda.ipc_collect": (_cpu.no_op, "nothing to collect"),
        "torch.cuda.reset_peak_memory_stats": (_cpu.no_op, "no device memory statistics"),
        "torch.cuda.reset_max_memory_allocated": (_cpu.no_op, "no device memory statistics"),
        "torch.cuda.reset_accumulated_memory_stats": (_cpu.no_op, "no device memory statistics"),
        "torch.cuda.get_device_name": (_cpu.returns("cpu"), "'cpu'"),
        "torch.cuda.get_device_capability": (_cpu.returns((0, 0)), "(0, 0): no CUDA features"),
        "torch.cuda.get_device_properties": (_cpu.calls(_cpu.device_properties),
                                             "name 'cpu', host memory, CPU count"),
        "torch.cuda.mem_get_info": (_cpu.calls(_cpu.host_memory_info), "host memory"),
        "torch.cuda.initial_seed": (_cpu.calls(torch.initial_seed), "the CPU generator's seed"),
        "torch.cuda.get_rng_state": (_cpu.calls(torch.get_rng_state), "the CPU generator's state"),
        "torch.cuda.set_rng_state": (_cpu.set_rng_state, "sets the CPU generator's state"),
        # The CPU generator is torch.cuda's (default_generators below): seeding it seeds that one,
        # or an RNG tracker's add(name, seed) would save the unseeded state.
        "torch.cuda.manual_seed": (_cpu.seed_cpu_generator, "seeds the CPU generator"),
        "torch.cuda.manual_seed_all": (_cpu.seed_cpu_generator, "seeds the CPU generator"),
        "torch.cuda.random.manual_seed": (_cpu.seed_cpu_generator,
                                          "seeds the CPU generator"),
        "torch.cuda.random.manual_seed_all": (_cpu.seed_cpu_generator,
                                              "seeds the CPU generator"),
        "torch.cuda.device": (_cpu.constant(_cpu.HostDeviceContext),
                              "a context (and class) that selects nothing"),
        "torch.cuda.utilization": (_cpu.returns(0), "0 (no GPU is busy)"),
        "torch.cuda.memory_usage": (_cpu.returns(0), "0 (no GPU memory is read or written)"),
        "torch.cuda.set_per_process_memory_fraction": (_cpu.MEMORY_FRACTIONS.set,
                                                       "checked and recorded, not enforced"),
        "torch.cuda.get_per_process_memory_fraction": (_cpu.MEMORY_FRACTIONS.get,
                                                       "the recorded fraction (1.0 unless set)"),
        "torch.cuda.memory_summary": (_cpu.returns(_cpu.MEMORY_SUMMARY),
                                      "a summary saying every CUDA memory statistic is 0"),
        "torch.cuda.memory._record_memory_history": (_cpu.no_op, "nothing to record"),
        "torch.cuda.memory._snapshot": (_cpu.calls(_cpu.empty_snapshot),
                                        "an empty snapshot (no segments, no traces)"),
        "torch.cuda.memory._dump_snapshot": (_cpu.dump_snapshot, "writes an empty snapshot"),
        "torch.cuda.memory_snapshot": (_cpu.calls(list), "[] (no segments)"),
        "torch.cuda.caching_allocator_alloc": (_cpu.HOST_ALLOCATIONS.alloc,
                                               "host memory, held until deleted"),
        "torch.cuda.caching_allocator_delete": (_cpu.HOST_ALLOCATIONS.delete,
                                                "releases what alloc held"),
    }  # fmt: skip
    for target, (factory, note) in cpu_only.items():
        yield Patch("AUTO202", target, f"on the CPU: {note}", cpu=factory)
    # Model-parallel RNG trackers queue their state setter with _lazy_call, which CUDA runs only once
    # it initialises: never, on the CPU, so the state would silently never be set.
    yield Patch("AUTO202", "torch.cuda._lazy_call",
                "CPU: runs the callback at once (the CPU needs no initialising); NPU: torch_npu's",
                cpu=_cpu.constant(_cpu.call_now),
                npu=_npu.NpuObject("torch_npu.npu._lazy_call"))  # fmt: skip
    yield Patch("AUTO202", "torch.cuda.default_generators",
                "CPU: the CPU generator; NPU: torch_npu's, read when used (torch_npu fills them "
                "when the NPU initialises)",
                cpu=_cpu.constant((torch.default_generator,)),
                npu=_npu.LiveNpuAttribute("torch_npu.npu.default_generators"))  # fmt: skip
    # A CUDA build of torch names CUDA as its accelerator even without a driver or a device; torch's own
    # optimizers, DataLoader and torch.accelerator then take CUDA paths that die ("Found no NVIDIA
    # driver"). What is usable decides, as on a CPU build of torch.
    accelerator = (
        "on the CPU: no accelerator, as on a CPU-only torch (torch.accelerator.*, optimizers, "
    )
    yield Patch("AUTO203", "torch._C._accelerator_getAccelerator",
                accelerator + "pinned DataLoaders)", cpu=_cpu.returns(None))  # fmt: skip
    yield Patch("AUTO203", "torch._C._get_accelerator",
                accelerator + "get_device_module(), init_process_group() without a backend)",
                cpu=_cpu.returns(torch.device("cpu")))  # fmt: skip


def _stream_and_event_rows() -> Iterator[Patch]:
    rows = {
        "torch.cuda.Event": (_cpu.constant(_cpu.HostClockEvent), "host-clock event (elapsed_time in ms)"),
        "torch.cuda.Stream": (_cpu.constant(_cpu.NoOpStream), "no-op stream"),
        "torch.cuda.stream": (_cpu.constant(_cpu.stream_context), "no-op stream context"),
        "torch.cuda.set_stream": (_cpu.no_op, "no-op"),
        "torch.cuda.current_stream": (_cpu.returns(_cpu.DEFAULT_STREAM), "the no-op stream"),
        "torch.cuda.default_stream": (_cpu.returns(_cpu.DEFAULT_STREAM), "the no-op stream"),
    }  # fmt: skip
    for target, (factory, note) in rows.items():
        yield Patch("AUTO210", target, f"on the CPU: {note}", cpu=factory)


def _graph_rows() -> Iterator[Patch]:
    note = ("on the CPU: raises CudaGraphUnavailableError explaining why (capture/replay cannot be "
            "emulated faithfully)")  # fmt: skip
    for name in ("CUDAGraph", "graph", "graph_pool_handle"):
        yield Patch("AUTO220", f"torch.cuda.{name}", note, cpu=_cpu.raises_graph_error)
    yield Patch("AUTO221", "torch.cuda.make_graphed_callables",
                "on the CPU: returns the callables, which run eagerly (same results)",
                cpu=_cpu.eager_callables)  # fmt: skip
    yield Patch("AUTO222", "torch.cuda.is_current_stream_capturing", "on the CPU: False",
                cpu=_cpu.returns(False))  # fmt: skip


def _legacy_tensor_rows() -> Iterator[Patch]:
    narrowed = _npu.WarnedNpuObject("torch_npu.npu.FloatTensor", message=_npu.DOUBLE_TENSOR_MESSAGE)
    for name in LEGACY_TENSOR_TYPES:
        cpu = _cpu.legacy_tensor_type(name)
        if name == "DoubleTensor":
            note = ("CPU: torch.DoubleTensor (float64 kept); NPU: float32, with a warning at every "
                    "line that uses it")  # fmt: skip
            yield Patch("AUTO231", f"torch.cuda.{name}", note, cpu=cpu, npu=narrowed)
        else:
            note = f"CPU: torch.{name}; NPU: torch_npu.npu.{name}"
            npu = _npu.NpuObject(f"torch_npu.npu.{name}")
            yield Patch("AUTO230", f"torch.cuda.{name}", note, cpu=cpu, npu=npu)


def _member_rows() -> Iterator[Patch]:
    for cuda_name, npu_name in METHOD_RENAMES.items():
        yield Patch("AUTO240", f"torch.Tensor.{cuda_name}", "CPU: .cpu(); NPU: .npu()",
                    cpu=_cpu.tensor_cuda, npu=_npu.NpuObject(f"torch.Tensor.{npu_name}"))  # fmt: skip
        yield Patch("AUTO240", f"torch.nn.Module.{cuda_name}", "CPU: .cpu(); NPU: .npu()",
                    cpu=_cpu.module_cuda, npu=_npu.NpuObject(f"torch.nn.Module.{npu_name}"))  # fmt: skip
    for cuda_name, npu_name in ATTRIBUTE_RENAMES.items():
        yield Patch("AUTO241", f"torch.Tensor.{cuda_name}",
                    f"CPU: unchanged (False is the truth); NPU: .{npu_name}",
                    npu=_npu.NpuObject(f"torch.Tensor.{npu_name}"))  # fmt: skip


def _npu_mirror_rows() -> Iterator[Patch]:
    """torch.cuda names with an NPU counterpart in torch_npu (same-name mirror, renames, profiler)."""
    facts = load_facts()
    handled = {patch.target for patch in _runtime_rows() if patch.npu is not None}
    names = [f"torch.cuda.{name}" for name in torch.cuda.__all__]
    names += [f"torch.profiler.{name}" for name in torch.profiler.__all__]
    names += ["torch.distributed.is_nccl_available"]
    for name in names:
        target = npu_target(name, facts)
        if name in handled or target is None or target.npu is None:
            continue
        caveat = " (unsafe: " + target.note + ")" if target.safety is Safety.UNSAFE else ""
        arguments = CUDA_FUNCTION_ARGUMENTS.get(name.removeprefix("torch.cuda."))
        if arguments is not None:
            caveat += " (device arguments redirected)"
        differences = differences_of(name)
        npu = _npu.NpuObject(target.npu, arguments)
        if differences:  # get_device_capability() None, properties without major/minor
            whole = [ast.literal_eval(d.stand_in) for d in differences if d.field is None]
            fields = tuple((d.field, ast.literal_eval(d.stand_in)) for d in differences if d.field)
            npu = _npu.KeptValueNpuObject(target.npu, arguments, (whole or [None])[0], fields)
            caveat += f" (kept readable: {differences[0].differs})"
        yield Patch("AUTO250", name, f"NPU: {target.npu}{caveat}", npu=npu)


def _distributed_rows() -> Iterator[Patch]:
    # torch_npu's own transfer_to_npu maps the NCCL process group class too; NPU hosts run a torch
    # build without NCCL, so the name is added there.
    hccl = _npu.NpuObject("torch_npu._C._distributed_c10d.ProcessGroupHCCL")
    for target in ("torch.distributed.ProcessGroupNCCL",
                   "torch.distributed.distributed_c10d.ProcessGroupNCCL"):  # fmt: skip
        yield Patch("AUTO260", target, "NPU: torch_npu's ProcessGroupHCCL (added where torch has no NCCL)",
                    npu=hccl, absent_ok=True)  # fmt: skip


@cache
def _runtime_rows() -> tuple[Patch, ...]:
    return (
        *_cuda_runtime_rows(),
        *_stream_and_event_rows(),
        *_graph_rows(),
        *_legacy_tensor_rows(),
        *_member_rows(),
        *_distributed_rows(),
    )


def _argument_rules() -> dict[str, ArgumentRule]:
    """Callable -> where its device and backend arguments are, merged from the shared tables."""
    rules: dict[str, ArgumentRule] = {}
    for parameter in DEVICE_PARAMETERS:
        if parameter.callable in NOT_REDIRECTED:
            continue
        kind = kind_of(parameter.keywords[0]) if parameter.keywords else ArgumentKind.DEVICE
        rule = ArgumentRule(
            tuple((index, kind) for index in parameter.positions),
            tuple((keyword, kind_of(keyword)) for keyword in parameter.keywords),
        )
        rules[parameter.callable] = rules.get(parameter.callable, ArgumentRule()).merged(rule)
    for backend in BACKEND_PARAMETERS:
        positions = () if backend.position is None else ((backend.position, ArgumentKind.BACKEND),)
        rule = ArgumentRule(positions, ((backend.keyword, ArgumentKind.BACKEND),))
        rules[backend.callable] = rules.get(backend.callable, ArgumentRule()).merged(rule)
    for callable_name, rule in RUNTIME_ARGUMENT_RULES.items():
        rules[callable_name] = rules.get(callable_name, ArgumentRule()).merged(rule)
    return rules


def _argument_rows() -> Iterator[Patch]:
    for callable_name, rule in _argument_rules().items():
        if callable_name.startswith("."):
            for receiver in METHOD_RECEIVERS:
                target = f"{receiver}{callable_name}"
                if _has_member(receiver, callable_name[1:]):
                    yield _argument_patch(target, rule, receiver=True)
        else:
            yield _argument_patch(callable_name, rule, receiver=False)


def _has_member(receiver: str, name: str) -> bool:
    owner, attribute = loaded_owner(receiver)  # torch.Tensor and torch.nn.Module load with torch
    return hasattr(getattr(owner, attribute), name)


@dataclass(frozen=True)
class ArgumentRedirect:
    """Factory: the original with its device and backend arguments redirected (see ``attach``)."""

    rule: ArgumentRule
    # The first argument is self or cls: methods, and __init__/__new__ of Python classes.
    receiver: bool
    # Replaces __new__, which the class must hold as a staticmethod.
    constructor: bool = False

    def __call__(self, original: Any, device_map: DeviceMap) -> Any:
        if isinstance(original, type):  # a built-in class: its __init__ cannot be replaced
            return redirect_constructor_class(original, self.rule, device_map)
        redirected = redirect_arguments(original, self.rule, device_map, self.receiver)
        return staticmethod(redirected) if self.constructor else redirected


def _argument_patch(target: str, rule: ArgumentRule, receiver: bool) -> Patch:
    redirect = ArgumentRedirect(rule, receiver)
    code = (
        "AUTO110" if any(kind is ArgumentKind.BACKEND for _, kind in rule.keywords) else "AUTO100"
    )
    override = _CPU_ARGUMENT_OVERRIDES.get(target)
    if override is None:
        return Patch(code, target, _describe(rule), cpu=redirect, npu=redirect)
    cpu, cpu_note = override
    return Patch(code, target, f"{cpu_note}; NPU: {_describe(rule)}", cpu=cpu, npu=redirect)


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class defined in Python, whose members can be replaced


def attach(row: Patch, owner: Any, name: str) -> tuple[Patch, Any, str]:
    """Where a row lands: a Python class's constructor arguments are redirected in its ``__init__``, or
    in its ``__new__`` when a built-in base consumes them there (``torch.UntypedStorage``)."""
    original = getattr(owner, name, None)
    redirect = row.npu
    python_class = isinstance(original, type) and bool(original.__flags__ & _HEAP_TYPE)
    if not (python_class and isinstance(redirect, ArgumentRedirect)):
        return row, owner, name
    member = "__init__" if original.__new__ is object.__new__ else "__new__"
    landed = ArgumentRedirect(redirect.rule, receiver=True, constructor=member == "__new__")
    cpu = landed if row.cpu is redirect else row.cpu
    return (
        Patch(row.code, f"{row.target}.{member}", row.note, cpu=cpu, npu=landed),
        original,
        member,
    )


def _describe(rule: ArgumentRule) -> str:
    parts = [f"arg {index}: {kind.value}" for index, kind in rule.positions]
    parts += [f"{name}=: {kind.value}" for name, kind in rule.keywords]
    return "redirects " + ", ".join(parts)


@cache
def patch_table() -> tuple[Patch, ...]:
    """Every row, for every device, in the order they are applied (imports nothing beyond torch)."""
    rows: dict[str, Patch] = {}
    for patch in (*_argument_rows(), *_runtime_rows(), *_npu_mirror_rows()):
        earlier = rows.get(patch.target)
        rows[patch.target] = patch if earlier is None else _merged(earlier, patch)
    for patch in _memory_module_rows(rows):
        rows.setdefault(patch.target, patch)
    return tuple(rows.values())


def _memory_module_rows(rows: dict[str, Patch]) -> Iterator[Patch]:
    """``torch.cuda.memory.X`` is the same function as ``torch.cuda.X`` but read from another
    module: it gets the same row (``torch.cuda.memory.mem_get_info()`` raised on the CPU)."""
    for name in torch.cuda.memory.__all__:
        row = rows.get(f"torch.cuda.{name}")
        if row is not None:
            yield dataclasses.replace(row, target=f"torch.cuda.memory.{name}")


def _merged(first: Patch, second: Patch) -> Patch:
    """A CPU stand-in row and an NPU mirror row for the same target become one row."""
    if (first.cpu and second.cpu) or (first.npu and second.npu):
        raise ValueError(f"two rows patch {first.target} on the same device")
    return Patch(
        first.code,
        first.target,
        f"{first.note}; {second.note}",
        cpu=first.cpu or second.cpu,
        npu=first.npu or second.npu,
        absent_ok=first.absent_ok or second.absent_ok,
    )


def rows_for(device: str) -> tuple[Patch, ...]:
    """The rows applied on ``device`` ("cpu" or "npu"; CUDA needs none)."""
    return tuple(patch for patch in patch_table() if patch.factory(device) is not None)
