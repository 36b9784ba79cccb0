"""The behaviours of torch_npu's transfer_to_npu that users rely on, checked on the CPU fallback.

Run on a CPU-only torch and on a CUDA build of torch without a GPU (CI runs both): on the CUDA build,
torch itself names CUDA as its accelerator, so these tests are what proves the redirect decides from what
is usable and not from how torch was built.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.distributed as dist

from tests.auto.conftest import CPU_REDIRECTED

pytestmark = CPU_REDIRECTED

CPU = torch.device("cpu")
META = torch.device("meta")


@pytest.mark.parametrize("device", ["cuda", "cuda:0", "cuda:1", 0, torch.device("cuda", 0)])
def test_device_strings_and_int_ids_place_tensors_on_the_cpu(device: Any) -> None:
    assert torch.ones(2, device=device).device == CPU
    assert torch.zeros(1).to(device).device == CPU
    assert torch.zeros(1).new_ones(2, device=device).device == CPU
    assert torch.nn.Linear(2, 1, device=device).weight.device == CPU


def test_tensor_to_in_every_form() -> None:
    tensor = torch.arange(3)
    forms: list[Callable[[], torch.Tensor]] = [
        lambda: tensor.to("cuda"),
        lambda: tensor.to("cuda:0", torch.float16),
        lambda: tensor.to(device="cuda", dtype=torch.float64),
        lambda: tensor.to(torch.device("cuda", 0), non_blocking=True),
        lambda: tensor.to(0),
        tensor.cuda,
        lambda: tensor.cuda(0, non_blocking=True),
    ]
    for form in forms:
        moved = form()
        assert moved.device == CPU
        assert moved.tolist() == [0, 1, 2]
    assert tensor.to("cuda", torch.float16).dtype == torch.float16
    assert tensor.to(torch.ones(1, dtype=torch.float64)).dtype == torch.float64


def test_generators_made_for_cuda_draw_like_cpu_generators() -> None:
    generator = torch.Generator(device="cuda").manual_seed(3)
    reference = torch.Generator().manual_seed(3)
    drawn = torch.randn(4, generator=generator, device="cuda")
    assert torch.equal(drawn, torch.randn(4, generator=reference))
    torch.manual_seed(5)
    # torch.cuda's generator is the CPU's (default_generators): seeding it seeds that one
    torch.cuda.manual_seed(6)
    assert torch.cuda.initial_seed() == torch.initial_seed() == 6
    torch.cuda.manual_seed_all(7)
    assert torch.cuda.initial_seed() == 7


def test_lazy_calls_run_at_once_on_the_cpu() -> None:
    """A model-parallel RNG tracker's setter: CUDA queues it until it initialises (never, here)."""
    state = torch.cuda.get_rng_state()
    first = torch.rand(3, device="cuda")
    torch.cuda._lazy_call(lambda: torch.cuda.default_generators[0].set_state(state))
    assert torch.equal(torch.rand(3, device="cuda"), first)


def test_default_generators_are_the_cpu_generator() -> None:
    generator = torch.cuda.default_generators[0]
    assert generator is torch.default_generator
    generator.manual_seed(11)
    first = torch.rand(2, device="cuda")
    torch.manual_seed(11)
    assert torch.equal(first, torch.rand(2))


@pytest.mark.parametrize(
    "context",
    [
        lambda: torch.autocast("cuda", dtype=torch.bfloat16),
        lambda: torch.autocast(device_type="cuda", dtype=torch.bfloat16),
        lambda: torch.amp.autocast("cuda", dtype=torch.bfloat16),
        lambda: torch.cuda.amp.autocast(dtype=torch.bfloat16),
    ],
)
def test_autocast_forms_cast_on_the_cpu(context: Callable[[], Any]) -> None:
    with context():
        product = torch.mm(torch.ones(2, 2, device="cuda"), torch.ones(2, 2, device="cuda"))
    assert product.device == CPU
    assert product.dtype == torch.bfloat16


@pytest.mark.parametrize(
    "scaler", [lambda: torch.amp.GradScaler("cuda"), torch.cuda.amp.GradScaler]
)
def test_grad_scalers_scale_and_step_on_the_cpu(scaler: Callable[[], Any]) -> None:
    weight = torch.nn.Parameter(torch.ones(2, device="cuda"))
    optimizer = torch.optim.SGD([weight], lr=0.5)
    grad_scaler = scaler()
    grad_scaler.scale((weight * 2).sum()).backward()
    grad_scaler.step(optimizer)
    grad_scaler.update()
    assert weight.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("device", ["meta", "cpu", "cuda", "cuda:0", META, torch.device("cuda", 0)])
def test_device_contexts_place_tensors_as_without_the_redirect(device: Any) -> None:
    expected = torch.device("cpu") if "cuda" in str(device) else torch.device(device)
    with torch.device(device):
        assert torch.nn.Linear(2, 2).weight.device == expected
        assert torch.empty(1).device == expected
        assert torch.fft.fftfreq(4).device == expected
        assert torch.tensor([1.0]).device == expected
    assert torch.empty(1).device == CPU


def test_device_contexts_nest() -> None:
    with torch.device("cuda"):
        with torch.device("meta"):
            assert torch.ones(1).device == META
        assert torch.ones(1).device == CPU


@pytest.mark.parametrize("device", ["meta", "cuda", "cuda:1", META])
def test_set_default_device_places_new_tensors(device: Any) -> None:
    expected = CPU if "cuda" in str(device) else META
    torch.set_default_device(device)
    try:
        assert torch.ones(1).device == expected
        assert torch.nn.Linear(2, 2).weight.device == expected
        assert torch.get_default_device() == expected
    finally:
        torch.set_default_device(None)
    assert torch.ones(1).device == CPU


def test_lazy_modules_move_before_their_first_batch() -> None:
    model = torch.nn.Sequential(torch.nn.LazyLinear(4), torch.nn.ReLU(), torch.nn.LazyLinear(1))
    model.to("cuda")
    model.cuda()
    assert model(torch.ones(2, 3, device="cuda")).shape == (2, 1)
    assert model[0].weight.device == CPU


def test_get_device_module_is_the_cpu_module() -> None:
    assert torch.get_device_module("cuda") is torch.cpu
    assert torch.get_device_module(torch.device("cuda", 0)) is torch.cpu
    assert torch.get_device_module() is torch.cpu


def test_there_is_no_accelerator_whatever_torch_was_built_for() -> None:
    assert torch.cuda.is_available() is False
    assert torch.accelerator.is_available() is False
    assert torch.accelerator.current_accelerator() is None
    assert torch.accelerator.current_accelerator(check_available=True) is None
    assert torch.accelerator.device_count() == 0


@pytest.mark.parametrize(
    ("optimizer", "options"),
    [
        (torch.optim.Adam, {}),
        (torch.optim.AdamW, {}),
        (torch.optim.AdamW, {"fused": True}),
        (torch.optim.Adam, {"foreach": True}),
        (torch.optim.RMSprop, {}),
        (torch.optim.Adadelta, {}),
        (torch.optim.SGD, {"lr": 0.1, "momentum": 0.9, "foreach": True}),
    ],
)
def test_optimizers_step_on_the_cpu(optimizer: type[Any], options: dict[str, Any]) -> None:
    parameter = torch.nn.Parameter(torch.ones(2, device="cuda"))
    parameter.grad = torch.ones(2, device="cuda")
    optimizer([parameter], **options).step()
    assert parameter.device == CPU
    assert (parameter < 1).all()


def test_data_loader_pin_memory_forms_load_in_process() -> None:
    data = torch.arange(6.0).reshape(3, 2)
    for options in ({"pin_memory": True}, {"pin_memory": True, "pin_memory_device": "cuda"}):
        with pytest.warns(UserWarning, match="no accelerator is found"):
            batches = list(torch.utils.data.DataLoader(data, batch_size=2, **options))  # type: ignore[arg-type]
        assert torch.equal(torch.cat(batches), data)


@pytest.mark.slow
def test_data_loader_pins_with_worker_processes() -> None:
    data = torch.arange(8.0).reshape(4, 2)
    loader = torch.utils.data.DataLoader(data, batch_size=2, pin_memory=True, num_workers=2)
    with pytest.warns(UserWarning, match="no accelerator is found"):
        batches = list(loader)
    assert torch.equal(torch.cat(batches), data)


def test_init_process_group_without_a_backend_chooses_gloo(init_method: str) -> None:
    dist.init_process_group(init_method=init_method, world_size=1, rank=0)
    try:
        assert dist.get_backend_config() == "cpu:gloo"
        total = torch.ones(1, device="cuda")
        dist.all_reduce(total)
        assert total.item() == 1.0
    finally:
        dist.destroy_process_group()


@pytest.mark.usefixtures("nccl_process_group")
@pytest.mark.parametrize(
    "wrap",
    [
        lambda module: torch.nn.parallel.DistributedDataParallel(module, [0]),
        lambda module: torch.nn.parallel.DistributedDataParallel(module, [0], 0),
        lambda module: torch.nn.parallel.DistributedDataParallel(module, device_ids=[0]),
        lambda module: torch.nn.parallel.DistributedDataParallel(
            module, device_ids=[torch.device("cuda", 0)], output_device="cuda:0"
        ),
    ],
)
def test_nccl_groups_and_ddp_device_ids_in_every_form(wrap: Callable[[Any], Any]) -> None:
    assert dist.get_backend() == "gloo"
    model = wrap(torch.nn.Linear(2, 1).cuda())
    model(torch.ones(3, 2, device="cuda")).sum().backward()
    assert model.module.weight.grad is not None
    total = torch.ones(1, device="cuda")
    dist.all_reduce(total)
    assert total.item() == 1.0


def test_profiler_with_cuda_activities_profiles_the_cpu() -> None:
    from torch.profiler import ProfilerActivity, profile

    with warnings.catch_warnings():  # torch warns that it drops the CUDA activity
        warnings.simplefilter("ignore")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as profiler:
            torch.ones(8, device="cuda").mul_(2)
    assert "aten::mul_" in profiler.key_averages().table(sort_by="cuda_time_total")


def test_streams_and_events() -> None:
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        result = torch.ones(2, device="cuda") * 3
    stream.synchronize()
    torch.cuda.current_stream().wait_stream(stream)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 0
    assert result.tolist() == [3.0, 3.0]
    for event in (torch.Event("cuda:0"), torch.Event(device="cuda"), torch.cuda.Event()):
        assert event.device == CPU
    assert torch.Event("cpu").device == CPU


def test_memory_and_utilization_queries_answer_for_the_cpu() -> None:
    for query in (
        "memory_allocated",
        "max_memory_allocated",
        "memory_reserved",
        "max_memory_reserved",
    ):
        assert getattr(torch.cuda, query)(0) == 0
    assert torch.cuda.utilization() == 0
    assert torch.cuda.utilization(0) == 0
    assert torch.cuda.memory_usage() == 0
    assert "CPU" in torch.cuda.memory_summary(0)
    assert "CPU" in torch.cuda.memory_summary(device="cuda:0", abbreviated=True)
    assert torch.cuda.memory._record_memory_history(max_entries=10) is None
    assert torch.cuda.memory._record_memory_history(enabled=None) is None
    free, total = torch.cuda.mem_get_info(0)
    assert 0 < free <= total
    torch.cuda.empty_cache()
    assert isinstance(torch.cuda.device(0), torch.cuda.device)


def test_memory_fractions_are_checked_and_recorded() -> None:
    torch.cuda.set_per_process_memory_fraction(0.5, device=0)
    assert torch.cuda.get_per_process_memory_fraction(0) == 0.5
    torch.cuda.set_per_process_memory_fraction(1.0)
    assert torch.cuda.get_per_process_memory_fraction() == 1.0
    with pytest.raises(ValueError, match="0~1"):
        torch.cuda.set_per_process_memory_fraction(1.5)
    with pytest.raises(TypeError, match="float"):
        torch.cuda.set_per_process_memory_fraction(1)  # type: ignore[arg-type]


def test_sparse_and_fft_constructors_take_cuda_devices() -> None:
    sparse = torch.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (3,), device="cuda")
    assert sparse.device == CPU
    assert sparse.to_dense().tolist() == [1.0, 2.0, 0.0]
    assert torch.sparse_csr_tensor([0, 1], [0], [1.0], (1, 1), device="cuda:0").device == CPU
    frequencies = torch.fft.fftfreq(4, device="cuda")
    assert frequencies.tolist() == [0.0, 0.25, -0.5, -0.25]
    assert torch.fft.rfft(torch.ones(4, device="cuda")).device == CPU


def test_allocator_and_snapshot_calls_answer_on_the_cpu(tmp_path: Any) -> None:
    # The originals raise on the CPU: TypeError (the stream argument), AttributeError (no CUDA).
    pointer = torch.cuda.caching_allocator_alloc(1024)
    assert pointer != 0
    torch.cuda.caching_allocator_delete(pointer)
    assert torch.cuda.memory._snapshot() == {"segments": [], "device_traces": []}
    assert torch.cuda.memory_snapshot() == []
    torch.cuda.memory._dump_snapshot(str(tmp_path / "snapshot.pickle"))
    assert (tmp_path / "snapshot.pickle").stat().st_size > 0


def test_the_memory_module_answers_as_torch_cuda() -> None:
    free, total = torch.cuda.memory.mem_get_info()  # raised: the module's own name was not patched
    assert 0 < free <= total
    assert torch.cuda.memory.memory_allocated(0) == torch.cuda.memory.max_memory_reserved() == 0
    pointer = torch.cuda.memory.caching_allocator_alloc(64, 0, None)
    torch.cuda.caching_allocator_delete(pointer)  # one allocator behind both names
