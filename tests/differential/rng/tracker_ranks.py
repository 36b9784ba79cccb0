"""Megatron-LM's seeding of a model-parallel RNG tracker, on the ranks of a process group: each
tensor-parallel rank forks a state seeded by its own rank (different dropout masks in the tensor
parallel region), every data-parallel rank the same one (the same masks), and the default state
is the data-parallel seed everywhere. Run under torchrun with two ranks, first as one group of two
tensor-parallel ranks, then as two data-parallel ranks.

Rank 0 prints one JSON line: per layout, each rank's masks drawn in the fork and outside it."""

import contextlib
import json

import torch
import torch.distributed as dist
from torch.cuda import _lazy_call


def _set_cuda_rng_state(new_state, device=-1):
    if device == -1:
        device = torch.device("cuda")
    elif isinstance(device, int):
        device = torch.device("cuda", device)

    def cb():
        idx = device.index
        if idx is None:
            idx = torch.cuda.current_device()
        torch.cuda.default_generators[idx].set_state(new_state)

    _lazy_call(cb)


class CudaRNGStatesTracker:
    def __init__(self):
        self.states_ = {}

    def reset(self):
        self.states_ = {}

    def add(self, name, seed):
        orig_rng_state = torch.cuda.get_rng_state()
        torch.cuda.manual_seed(seed)
        self.states_[name] = torch.cuda.get_rng_state()
        _set_cuda_rng_state(orig_rng_state)

    @contextlib.contextmanager
    def fork(self, name="model-parallel-rng"):
        orig_cuda_rng_state = torch.cuda.get_rng_state()
        _set_cuda_rng_state(self.states_[name])
        try:
            yield
        finally:
            self.states_[name] = torch.cuda.get_rng_state()
            _set_cuda_rng_state(orig_cuda_rng_state)


_TRACKER = CudaRNGStatesTracker()


def model_parallel_cuda_manual_seed(seed, tensor_parallel_rank):
    tensor_model_parallel_seed = seed + 2718 + tensor_parallel_rank
    _TRACKER.reset()
    torch.cuda.manual_seed(seed)
    _TRACKER.add("model-parallel-rng", tensor_model_parallel_seed)


def masks(tensor_parallel_size):
    rank = dist.get_rank()
    torch.manual_seed(1234)
    model_parallel_cuda_manual_seed(1234, rank % tensor_parallel_size)
    ones = torch.ones(12, device="cuda")
    with _TRACKER.fork():
        forked = torch.nn.functional.dropout(ones, p=0.5)
    default = torch.nn.functional.dropout(ones, p=0.5)
    drawn = {"fork": forked.tolist(), "default": default.tolist()}
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, drawn)
    return gathered


def main():
    dist.init_process_group("nccl")
    found = {"tensor_parallel": masks(2), "data_parallel": masks(1)}
    if dist.get_rank() == 0:
        print(json.dumps(found))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
