from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
import torch
import torch.distributed as dist

# What torch says when CUDA code runs without CUDA: "Torch not compiled with CUDA enabled" on a CPU-only
# torch, "Found no NVIDIA driver on your system" on a CUDA build without a GPU.
NO_CUDA = "CUDA|NVIDIA"

# The marks of a test module whose every test runs redirected to the CPU backend; code written
# for CUDA uses the old ``torch.cuda.amp`` spelling on purpose, so its warning is expected.
CPU_REDIRECTED = [
    pytest.mark.cuda_build,
    pytest.mark.usefixtures("cpu_redirect"),
    pytest.mark.filterwarnings("ignore:`torch.cuda.amp:FutureWarning"),
]


@pytest.fixture
def cpu_redirect() -> Iterator[str]:
    """The redirect enabled for the CPU in this process, with its own environment, then reverted."""
    from ascendify import auto

    choice = auto.enable("cpu", environ={"RANK": "1"})
    try:
        yield choice.device
    finally:
        auto.disable()


@pytest.fixture
def init_method() -> str:
    """A TCP rendezvous address on a free loopback port, for a one-rank process group."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{probe.getsockname()[1]}"


@pytest.fixture
def nccl_process_group(cpu_redirect: str, init_method: str) -> Iterator[None]:
    """A one-rank process group asked for as NCCL on cuda:0, the way GPU scripts ask for it."""
    dist.init_process_group(
        "nccl", init_method=init_method, world_size=1, rank=0, device_id=torch.device("cuda", 0)
    )
    try:
        yield
    finally:
        dist.destroy_process_group()
