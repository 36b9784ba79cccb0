"""The CPU backend, row family by row family, through the real torch calls users write."""

from __future__ import annotations

import time
from pathlib import Path
from unittest import mock

import pytest
import torch
import torch.distributed as dist

from ascendify.auto import CudaGraphUnavailableError
from tests.auto.conftest import CPU_REDIRECTED, NO_CUDA

pytestmark = CPU_REDIRECTED

CPU = torch.device("cpu")


def test_cuda_queries_answer_for_the_host() -> None:
    assert torch.cuda.is_available() is False
    assert torch.cuda.current_device() == 0
    assert torch.cuda.set_device(1) is None
    assert torch.cuda.synchronize() is None
    assert torch.cuda.get_device_name() == "cpu"
    assert torch.cuda.get_device_capability() == (0, 0)
    properties = torch.cuda.get_device_properties(0)
    assert properties.name == "cpu"
    assert properties.total_memory > 0
    free, total = torch.cuda.mem_get_info()
    assert 0 < free <= total == properties.total_memory
    for reset in ("reset_peak_memory_stats", "reset_max_memory_allocated", "ipc_collect",
                  "reset_accumulated_memory_stats"):  # fmt: skip
        assert getattr(torch.cuda, reset)() is None
    with torch.cuda.device(1):
        assert torch.ones(1).device == CPU


def test_legacy_type_names_in_strings_become_cpu_types() -> None:
    assert torch.ones(2).type("torch.cuda.HalfTensor").dtype == torch.float16
    assert torch.ones(2).type(dtype="torch.cuda.LongTensor").dtype == torch.int64
    assert torch.ones(2).type() == "torch.FloatTensor"


def test_cuda_rng_state_is_the_cpu_generator_state() -> None:
    assert torch.cuda.default_generators[0] is torch.default_generator
    torch.manual_seed(7)
    assert torch.cuda.initial_seed() == 7
    state = torch.cuda.get_rng_state()
    first = torch.rand(3)
    torch.cuda.set_rng_state(state)
    assert torch.equal(torch.rand(3), first)


def test_events_time_with_the_host_clock() -> None:
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    time.sleep(0.02)
    end.record(torch.cuda.current_stream())
    end.synchronize()
    assert start.query()
    assert 15 <= start.elapsed_time(end) < 2000
    with pytest.raises(RuntimeError, match="enable_timing"):
        torch.cuda.Event().elapsed_time(end)
    with pytest.raises(RuntimeError, match="recorded"):
        torch.cuda.Event(enable_timing=True).elapsed_time(end)


def test_torch_event_and_stream_for_cuda_are_host_stand_ins_and_stay_instances() -> None:
    event = torch.Event("cuda", enable_timing=True)
    later = torch.Event(device="cuda", enable_timing=True)
    event.record()
    later.record()
    assert event.elapsed_time(later) >= 0
    assert isinstance(event, torch.Event)
    assert type(torch.Event("cpu")).__name__ == "Event"
    assert isinstance(torch.Stream("cuda"), torch.Stream)
    assert isinstance(torch.Stream("cpu"), torch.Stream)


def test_streams_are_no_ops_on_one_in_order_queue() -> None:
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        value = torch.ones(2, device="cuda") * 2
    torch.cuda.current_stream().wait_stream(side)
    side.wait_event(side.record_event())
    torch.cuda.set_stream(side)
    assert side.query()
    assert torch.cuda.default_stream() == torch.cuda.current_stream()
    assert value.tolist() == [2.0, 2.0]


def test_cuda_graph_capture_raises_a_specific_error() -> None:
    with pytest.raises(CudaGraphUnavailableError, match="no CPU counterpart"):
        torch.cuda.CUDAGraph()
    with pytest.raises(CudaGraphUnavailableError):
        torch.cuda.graph_pool_handle()
    with pytest.raises(CudaGraphUnavailableError, match=r"torch\.cuda\.graph"):
        torch.cuda.graph(None)
    assert torch.cuda.is_current_stream_capturing() is False


def test_graphed_callables_run_eagerly_with_the_same_results() -> None:
    model = torch.nn.Linear(3, 2)
    graphed = torch.cuda.make_graphed_callables(model, (torch.ones(1, 3),))
    assert graphed is model


@pytest.mark.parametrize(
    "name",
    ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
     "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"],
)  # fmt: skip
def test_legacy_cuda_tensor_types_are_the_cpu_types_with_the_same_dtype(name: str) -> None:
    legacy = getattr(torch.cuda, name)
    assert legacy is getattr(torch, name)
    assert legacy([1]).dtype == getattr(torch, name)([1]).dtype
    assert torch.ones(1).type(legacy).dtype == legacy([1]).dtype


def test_tensor_and_module_cuda_stay_on_the_cpu() -> None:
    tensor = torch.ones(2)
    assert tensor.cuda() is tensor
    assert tensor.cuda(1, non_blocking=True).device == CPU
    assert tensor.is_cuda is False
    model = torch.nn.Linear(2, 2)
    assert model.cuda() is model
    assert tensor.pin_memory() is tensor


@pytest.mark.parametrize(
    "spec", ["cuda", "cuda:1", torch.device("cuda"), torch.device("cuda", 1), 0]
)
def test_device_arguments_in_every_form_go_to_the_cpu(spec: object) -> None:
    tensor = torch.ones(2)
    assert tensor.to(spec).device == CPU
    assert tensor.to(device=spec, dtype=torch.float64).dtype == torch.float64
    assert torch.zeros(2, device=spec).device == CPU
    assert torch.randint(0, 5, (2,), device=spec).device == CPU
    assert tensor.new_zeros(3, device=spec).device == CPU
    assert torch.nn.Linear(2, 2, device=spec).weight.device == CPU
    assert torch.nn.Linear(2, 2).to(spec).weight.device == CPU
    assert torch.Generator(spec).device == CPU
    assert torch.UntypedStorage(4, device=spec).device == CPU


def test_generators_made_anywhere_are_still_generators() -> None:
    assert isinstance(torch.default_generator, torch.Generator)
    assert isinstance(torch.Generator(device="cuda").manual_seed(3), torch.Generator)


def test_default_device_and_device_context() -> None:
    with torch.device("cuda"):
        assert torch.ones(1).device == CPU
    torch.set_default_device("cuda")
    try:
        assert torch.ones(1).device == CPU
    finally:
        torch.set_default_device(None)
    assert torch.get_device_module("cuda") is torch.cpu


def test_autocast_in_both_spellings_runs_on_the_cpu() -> None:
    layer = torch.nn.Linear(4, 4)
    with torch.cuda.amp.autocast():
        assert torch.is_autocast_enabled("cuda")
        assert layer(torch.ones(1, 4)).dtype == torch.float16
    with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
        assert layer(torch.ones(1, 4)).dtype == torch.bfloat16
    with torch.amp.autocast("cuda", dtype=torch.bfloat16):
        assert torch.get_autocast_dtype("cuda") == torch.bfloat16
    custom = torch.amp.custom_fwd(device_type="cuda")
    assert callable(custom)


@pytest.mark.parametrize("spelling", ["torch.cuda.amp", "torch.amp"])
def test_grad_scalers_in_both_spellings_scale_on_the_cpu(spelling: str) -> None:
    if spelling == "torch.cuda.amp":
        scaler = torch.cuda.amp.GradScaler()
    else:
        scaler = torch.amp.GradScaler("cuda")
    assert scaler.is_enabled()
    weight = torch.nn.Parameter(torch.ones(2))
    optimizer = torch.optim.SGD([weight], lr=0.5)
    scaler.scale((weight * 3).sum()).backward()
    assert weight.grad is not None
    assert weight.grad.tolist() == [3.0 * 65536] * 2
    scaler.step(optimizer)
    scaler.update()
    assert weight.tolist() == [-0.5, -0.5]


@pytest.fixture
def cuda_checkpoint(tmp_path: Path) -> Path:
    """A checkpoint whose storages are tagged cuda:0, byte for byte what a GPU host writes."""
    path = tmp_path / "cuda_run" / "model.pt"
    path.parent.mkdir()
    with mock.patch("torch.serialization.location_tag", return_value="cuda:0"):
        torch.save({"weight": torch.arange(4.0)}, path)
    return path


@pytest.mark.parametrize(
    "map_location",
    [None, "cuda", "cuda:0", torch.device("cuda", 0), 0, {"cuda:0": "cuda:1"},
     lambda storage, location: None],
)  # fmt: skip
def test_cuda_checkpoints_load_on_the_cpu_with_map_location_in_every_form(
    cuda_checkpoint: Path, map_location: object
) -> None:
    if map_location is None:
        state = torch.load(cuda_checkpoint)
    else:
        state = torch.load(cuda_checkpoint, map_location=map_location)
    assert state["weight"].device == CPU
    assert state["weight"].tolist() == [0.0, 1.0, 2.0, 3.0]


def test_the_cuda_checkpoint_fixture_really_needs_cuda(cuda_checkpoint: Path) -> None:
    from ascendify import auto

    auto.disable()
    with pytest.raises(RuntimeError, match=NO_CUDA):
        torch.load(cuda_checkpoint)


def test_profiler_with_a_cuda_activity_profiles_the_cpu() -> None:
    from torch.profiler import ProfilerActivity, profile

    with (
        pytest.warns(UserWarning, match="CUDA is not available"),
        profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as profiler,
    ):
        torch.ones(8).add_(1)
    assert "aten::add_" in profiler.key_averages().table(sort_by="cuda_time_total")


def test_data_loader_pin_memory_device_is_dropped() -> None:
    loader = torch.utils.data.DataLoader([1, 2], pin_memory_device="cuda")
    assert [int(batch) for batch in loader] == [1, 2]


@pytest.mark.usefixtures("nccl_process_group")
def test_distributed_nccl_becomes_gloo_and_ddp_device_ids_are_dropped() -> None:
    assert dist.get_backend() == "gloo"
    group = dist.new_group([0], backend="nccl")
    assert dist.get_backend(group) == "gloo"
    model = torch.nn.parallel.DistributedDataParallel(
        torch.nn.Linear(2, 1).cuda(), device_ids=[0], output_device=0
    )
    model(torch.ones(3, 2, device="cuda")).sum().backward()
    assert model.module.weight.grad is not None
    mesh = dist.init_device_mesh("cuda", (1,))
    assert mesh.device_type == "cpu"
    assert dist.device_mesh.DeviceMesh("cuda", [0]).device_type == "cpu"
    total = torch.ones(1, device="cuda")
    dist.all_reduce(total)
    assert total.item() == 1.0


@pytest.mark.usefixtures("nccl_process_group")
def test_fsdp2_shards_over_a_cuda_mesh_and_fsdp1_says_it_needs_an_accelerator() -> None:
    from torch.distributed.fsdp import FullyShardedDataParallel, fully_shard

    model = torch.nn.Linear(4, 2).cuda()
    fully_shard(model, mesh=dist.init_device_mesh("cuda", (1,)))
    model(torch.ones(3, 4, device="cuda")).sum().backward()
    assert model.weight.grad is not None
    # FSDP1 has no CPU implementation at all; torch says so (its device_id was dropped, not faked).
    with pytest.raises(RuntimeError, match="accelerator"):
        FullyShardedDataParallel(torch.nn.Linear(4, 2), device_id=torch.device("cuda", 0))
