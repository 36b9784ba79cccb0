"""The generated ``portable_device`` helper on a host without an accelerator (this one): what it
answers where the original ``torch.cuda`` call answered too, loaded in this process."""

from __future__ import annotations

import types

import pytest
import torch

from ascendify.migrate.extras import template_bytes


@pytest.fixture(scope="module")
def helper() -> types.ModuleType:
    module = types.ModuleType("portable_device")
    exec(compile(template_bytes("portable_device.py"), "portable_device.py", "exec"), vars(module))
    return module


@pytest.mark.cuda_build
def test_memory_stats_are_empty_without_an_accelerator_as_torch_cuda_s_are(
    helper: types.ModuleType,
) -> None:
    assert not torch.accelerator.is_available()
    assert helper.memory_stats(0) == dict(torch.cuda.memory_stats(0)) == {}
    assert helper.memory_stats() == {}


@pytest.mark.cuda_build
def test_initial_seed_is_the_cpu_generator_s_without_an_accelerator(
    helper: types.ModuleType,
) -> None:
    assert not torch.accelerator.is_available()
    state = torch.get_rng_state()
    try:
        torch.manual_seed(1234)
        assert helper.initial_seed() == 1234
    finally:
        torch.set_rng_state(state)


@pytest.mark.cuda_build
def test_the_default_stream_is_the_cpu_s_and_a_device_sleep_returns_without_an_accelerator(
    helper: types.ModuleType,
) -> None:
    assert not torch.accelerator.is_available()
    assert isinstance(helper.default_stream(), torch.cpu.Stream)
    assert helper.device_sleep(1_000_000) is None
