# rules: NPU001 NPU305 NPU305 NPU305 NPU305 NPU305 NPU901
import warnings
import torch
from transformers.utils import is_torch_npu_available


def get_device():
    if is_torch_npu_available():
        return "npu"
    elif torch.cuda.is_available():
        return "cuda"
    return "cpu"


def setup(device):
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        warnings.warn("TF32 on")
    if device != "cuda":
        return None
    torch.cuda.set_device(0)
    return device


def memory(device):
    if device == "npu":
        return torch.npu.memory_allocated()
    if device.startswith("cuda"):
        return torch.cuda.memory_allocated()
    return 0


def place(x, device):
    if device == "cuda":
        x = x.cuda()
    return x
# output
import warnings
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from transformers.utils import is_torch_npu_available


def get_device():
    if is_torch_npu_available():
        return "npu"
    elif torch.cuda.is_available():
        return "cuda"
    return "cpu"


def setup(device):
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        warnings.warn("TF32 on")
    if device != "cuda":
        return None
    torch.cuda.set_device(0)
    return device


def memory(device):
    if device == "npu":
        return torch.npu.memory_allocated()
    if device.startswith("cuda"):
        return torch.cuda.memory_allocated()
    return 0


def place(x, device):
    if device == "cuda":
        x = x.cuda()
    return x
