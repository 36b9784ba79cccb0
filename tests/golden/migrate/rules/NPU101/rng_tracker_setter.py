# rules: NPU001 NPU101 NPU101 NPU101 NPU101 NPU101 NPU301 NPU301
import torch
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
        default_generator = torch.cuda.default_generators[idx]
        default_generator.set_state(new_state)

    _lazy_call(cb)


def seed_all(seed):
    torch.cuda._lazy_call(lambda: torch.cuda.random.manual_seed_all(seed))
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from torch_npu.npu import _lazy_call


def _set_cuda_rng_state(new_state, device=-1):
    if device == -1:
        device = torch.device("npu")
    elif isinstance(device, int):
        device = torch.device("npu", device)

    def cb():
        idx = device.index
        if idx is None:
            idx = torch_npu.npu.current_device()
        default_generator = torch_npu.npu.default_generators[idx]
        default_generator.set_state(new_state)

    _lazy_call(cb)


def seed_all(seed):
    torch_npu.npu._lazy_call(lambda: torch_npu.npu.random.manual_seed_all(seed))
