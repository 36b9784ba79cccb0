"""Every row of the patch table: applied, redirecting what it declares, and reverted exactly."""

from __future__ import annotations

import functools
import re
import types
from typing import Any

import pytest
import torch

from ascendify import auto
from ascendify.auto._devicemap import DROP, ArgumentKind, DeviceMap
from ascendify.auto._npu import (
    KeptValueNpuObject,
    LiveNpuAttribute,
    NpuObject,
    ServedAttribute,
    WarnedNpuObject,
    claims_available,
    keep_values,
)
from ascendify.auto._patcher import Patcher, Replacement
from ascendify.auto._redirect import redirect_arguments
from ascendify.auto._resolve import resolve_owner
from ascendify.auto._table import NOT_REDIRECTED, _argument_rules, patch_table, rows_for
from ascendify.errors import AscendifyError
from ascendify.targets import load_facts
from ascendify.targets.devices import BACKEND_PARAMETERS, DEVICE_PARAMETERS

pytestmark = pytest.mark.cuda_build

# Planned at first use, not at collection: a plan resolves every row's owner (seconds of imports
# inside torch), which each test worker would pay even where it runs none of these tests.
plan_of = functools.cache(auto.plan)
RULES = _argument_rules()


def _own_attribute(target: str) -> Any:
    owner, name = resolve_owner(target)
    return vars(owner).get(name, "<inherited>") if isinstance(owner, type) else getattr(owner, name)


def test_every_cpu_row_is_replaced_while_enabled_and_restored_by_disable() -> None:
    before = {row.target: _own_attribute(row.target) for row in plan_of("cpu")}
    auto.enable("cpu", environ={"RANK": "1"})
    try:
        during = {row.target: _own_attribute(row.target) for row in plan_of("cpu")}
    finally:
        auto.disable()
    after = {row.target: _own_attribute(row.target) for row in plan_of("cpu")}
    unchanged = [target for target in before if during[target] is before[target]]
    assert unchanged == []
    restored = [target for target in before if after[target] is not before[target]]
    assert restored == []


def test_enabling_twice_wraps_once_and_returns_the_same_choice() -> None:
    first = auto.enable("cpu", environ={"RANK": "1"})
    try:
        wrapper = torch.Tensor.to
        second = auto.enable(environ={"RANK": "1"})
        assert second is first
        assert torch.Tensor.to is wrapper
        assert wrapper.__wrapped__ is torch._C.TensorBase.to  # type: ignore[attr-defined]
        with pytest.raises(AscendifyError, match="already enabled for cpu"):
            auto.enable("npu", environ={"RANK": "1"})
    finally:
        auto.disable()
    auto.disable()  # a second disable is harmless
    assert not auto.is_enabled()
    assert torch.Tensor.to is torch._C.TensorBase.to


def test_every_shared_device_and_backend_parameter_becomes_a_row() -> None:
    declared = {p.callable for p in DEVICE_PARAMETERS} | {p.callable for p in BACKEND_PARAMETERS}
    assert declared - set(NOT_REDIRECTED) <= set(RULES)
    assert "torch.device" not in RULES


@pytest.mark.parametrize("callable_name", sorted(RULES))
def test_each_argument_rule_redirects_every_argument_it_declares(callable_name: str) -> None:
    rule = RULES[callable_name]
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def record(*args: Any, **kwargs: Any) -> None:
        calls.append((args, kwargs))

    redirected = redirect_arguments(record, rule, DeviceMap("cpu"), receiver=False)
    for index, kind in rule.positions:
        redirected(*(["keep"] * index), _cuda_value(kind))
        args, _ = calls.pop()
        assert args[:index] == ("keep",) * index
        assert _redirected_on_cpu(args[index], kind), (index, args[index])
    for name, kind in rule.keywords:
        redirected(**{name: _cuda_value(kind)})
        _, kwargs = calls.pop()
        if kind in (ArgumentKind.DEVICE_HINT, ArgumentKind.DEVICE_LIST):
            assert name not in kwargs  # no accelerator: the placement hint is dropped
        else:
            assert _redirected_on_cpu(kwargs[name], kind), (name, kwargs[name])


def _cuda_value(kind: ArgumentKind) -> Any:
    return {
        ArgumentKind.DEVICE: "cuda:1",
        ArgumentKind.DEVICE_TYPE: "cuda",
        ArgumentKind.DEVICE_HINT: 1,
        ArgumentKind.DEVICE_LIST: [1],
        ArgumentKind.MAP_LOCATION: "cuda:1",
        ArgumentKind.BACKEND: "nccl",
        ArgumentKind.TENSOR_TYPE: "torch.cuda.HalfTensor",
    }[kind]


def _redirected_on_cpu(value: Any, kind: ArgumentKind) -> bool:
    if kind is ArgumentKind.BACKEND:
        return value == "gloo"
    if kind is ArgumentKind.TENSOR_TYPE:
        return value == "torch.HalfTensor"
    if kind is ArgumentKind.DEVICE_TYPE:
        return value == "cpu"
    if kind in (ArgumentKind.DEVICE_HINT, ArgumentKind.DEVICE_LIST):
        return value is None or value is DROP
    return torch.device(value) == torch.device("cpu")


def test_the_npu_map_keeps_device_indices_and_uses_hccl() -> None:
    npu = DeviceMap("npu")
    assert npu.device("cuda:1") == "npu:1"
    assert npu.device("cuda") == "npu"
    assert npu.device(torch.device("cuda", 2)) == "npu:2"
    assert npu.device(3) == "npu:3"
    assert npu.device_type("cuda") == "npu"
    assert npu.device_list([0, "cuda:1"]) == ["npu:0", "npu:1"]
    assert npu.hint(1) == "npu:1"
    assert npu.backend("nccl") == "hccl"
    assert npu.backend("cuda:nccl,cpu:gloo") == "npu:hccl,cpu:gloo"
    assert npu.map_location({"cuda:0": "cuda:1"}) == {"cuda:0": "npu:1"}
    assert npu.tensor_type("torch.cuda.LongTensor") == "torch.npu.LongTensor"


def test_the_cpu_map_merges_backend_pairs_and_leaves_other_values_alone() -> None:
    cpu = DeviceMap("cpu")
    assert cpu.backend("cuda:nccl,cpu:gloo") == "cpu:gloo"
    assert cpu.backend("gloo") == "gloo"
    assert cpu.device("cpu") == torch.device("cpu")
    assert cpu.device("meta") == "meta"
    assert cpu.device(torch.float16) is torch.float16
    assert cpu.device(True) is True
    assert cpu.device("checkpoints/cuda:0.pt") == "checkpoints/cuda:0.pt"


def test_every_npu_mirror_names_an_object_that_torch_npu_exports() -> None:
    facts = load_facts()
    planned = {row.target for row in plan_of("npu")}
    npu_names = {
        row.target: row.npu.qualified
        for row in patch_table()
        if isinstance(row.npu, NpuObject) and row.target in planned
    }
    assert len(npu_names) > 60
    missing = {
        target: name
        for target, name in npu_names.items()
        if name.startswith("torch_npu.") and not facts.has(name)
    }
    # Not in torch_npu's __all__ lists (the facts), but used by torch_npu's own transfer_to_npu.
    assert set(missing.values()) == {"torch_npu._C._distributed_c10d.ProcessGroupHCCL"}
    assert npu_names["torch.cuda.CUDAGraph"] == "torch_npu.npu.NPUGraph"
    assert npu_names["torch.Tensor.cuda"] == "torch.Tensor.npu"
    assert npu_names["torch.Tensor.is_cuda"] == "torch.Tensor.is_npu"
    assert npu_names["torch.profiler.profile"] == "torch_npu.profiler.profile"


def test_the_npu_plan_redirects_arguments_and_uses_torch_npu_for_cuda_objects() -> None:
    npu_rows = {row.target: row for row in rows_for("npu")}
    for target in ("torch.Tensor.to", "torch.distributed.init_process_group", "torch.load"):
        assert npu_rows[target].code in ("AUTO100", "AUTO110")
    for name in ("Event", "Stream", "current_device", "device_count"):
        assert npu_rows[f"torch.cuda.{name}"].npu == NpuObject(f"torch_npu.npu.{name}")
    for name in ("synchronize", "set_device", "memory_allocated", "set_rng_state"):
        npu = npu_rows[f"torch.cuda.{name}"].npu
        assert isinstance(npu, NpuObject)
        assert npu.qualified == f"torch_npu.npu.{name}"
        assert npu.arguments is not None  # torch.cuda.set_device("cuda:1") -> npu:1
    double = npu_rows["torch.cuda.DoubleTensor"].npu
    assert isinstance(double, WarnedNpuObject)
    assert double.qualified == "torch_npu.npu.FloatTensor"
    assert "float64" in double.message or "float32" in double.message
    assert npu_rows["torch.cuda.is_available"].npu is claims_available


def test_rows_have_codes_and_notes() -> None:
    for row in patch_table():
        assert re.fullmatch(r"AUTO\d{3}", row.code), row
        assert row.note, row


def test_the_npu_plan_maps_default_generators_and_the_nccl_process_group() -> None:
    rows = {row.target: row for row in rows_for("npu")}
    generators = LiveNpuAttribute("torch_npu.npu.default_generators")
    assert rows["torch.cuda.default_generators"].npu == generators
    hccl = NpuObject("torch_npu._C._distributed_c10d.ProcessGroupHCCL")
    planned = {row.target for row in plan_of("npu")}
    for target in ("torch.distributed.ProcessGroupNCCL",
                   "torch.distributed.distributed_c10d.ProcessGroupNCCL"):  # fmt: skip
        assert rows[target].npu == hccl
        assert target in planned  # even where this torch has no NCCL: the row adds the name
    assert "torch.cuda.default_generators" in planned


def test_an_added_attribute_is_removed_and_a_served_one_is_read_at_every_use() -> None:
    module = types.ModuleType("scratch")
    module.generators = ()  # type: ignore[attr-defined]
    source = types.SimpleNamespace(generators=())
    patcher = Patcher()
    patcher.apply([
        Replacement("scratch.ProcessGroup", module, "ProcessGroup", int),
        Replacement("scratch.generators", module, "generators",
                    ServedAttribute(lambda: source.generators)),
    ])  # fmt: skip
    assert module.ProcessGroup is int  # type: ignore[attr-defined]
    source.generators = (1, 2)
    assert module.generators == (1, 2)  # type: ignore[attr-defined]
    patcher.revert()
    assert not hasattr(module, "ProcessGroup")
    assert module.generators == ()  # type: ignore[attr-defined]


def test_npu_values_cuda_code_reads_stay_readable() -> None:
    npu_rows = {row.target: row for row in rows_for("npu")}
    capability = npu_rows["torch.cuda.get_device_capability"].npu
    assert isinstance(capability, KeptValueNpuObject)
    assert capability.whole == (0, 0)
    properties = npu_rows["torch.cuda.get_device_properties"].npu
    assert isinstance(properties, KeptValueNpuObject)
    assert dict(properties.fields) == {"major": 0, "minor": 0}
    # as torch_npu answers: None unless TORCH_NPU_DEVICE_CAPABILITY is set; no major/minor
    assert keep_values(lambda device=None: None, whole=(0, 0))(0)[0] >= 0
    read = keep_values(lambda: types.SimpleNamespace(name="Ascend910B"), fields={"major": 0})()
    assert (read.name, read.major) == ("Ascend910B", 0)
    with pytest.raises(AttributeError):
        _ = read.multi_processor_count


def test_a_row_for_a_name_this_torch_lacks_adds_it() -> None:
    """NPU hosts run a torch build without NCCL: the ProcessGroupNCCL rows (absent_ok) must build
    there, not fail reading the original that is not there."""
    import sys

    from ascendify.auto._session import _build
    from ascendify.auto._table import Patch

    module = types.ModuleType("scratch_without_nccl")
    sys.modules[module.__name__] = module
    try:
        row = Patch("AUTO260", f"{module.__name__}.ProcessGroupNCCL", "added",
                    npu=lambda original, device_map: ("hccl", original), absent_ok=True)  # fmt: skip
        (replacement,) = _build(row, "npu", DeviceMap("npu"))
        assert replacement.name == "ProcessGroupNCCL"
        assert replacement.value == ("hccl", None)
    finally:
        del sys.modules[module.__name__]
