# rules: NPU001 NPU101 NPU101 NPU101 NPU101 NPU101 NPU101 NPU101 NPU101 NPU101 NPU301 NPU301 NPU301 NPU301 NPU301 NPU301
import torch
from torch.cuda.random import set_rng_state


def restore(state, states, rank):
    torch.cuda.set_rng_state(state, "cuda")
    torch.cuda.set_rng_state(state, device="cuda:0")
    torch.cuda.set_rng_state(new_state=state, device=f"cuda:{rank}")
    torch.cuda.random.set_rng_state(state, "cuda:1")
    set_rng_state(state, "cuda")
    saved = torch.cuda.get_rng_state("cuda")
    torch.cuda.set_rng_state(state)  # the current device: nothing to change
    torch.set_rng_state(states["cpu"])  # the CPU generator
    torch.cuda.set_rng_state_all(states["cuda"])
    return saved, torch.cuda.get_rng_state_all(), "cuda"
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from torch_npu.npu.random import set_rng_state


def restore(state, states, rank):
    torch_npu.npu.set_rng_state(state, "npu")
    torch_npu.npu.set_rng_state(state, device="npu:0")
    torch_npu.npu.set_rng_state(new_state=state, device=f"npu:{rank}")
    torch_npu.npu.random.set_rng_state(state, "npu:1")
    set_rng_state(state, "npu")
    saved = torch_npu.npu.get_rng_state("npu")
    torch_npu.npu.set_rng_state(state)  # the current device: nothing to change
    torch.set_rng_state(states["cpu"])  # the CPU generator
    torch_npu.npu.set_rng_state_all(states["cuda"])
    return saved, torch_npu.npu.get_rng_state_all(), "cuda"
