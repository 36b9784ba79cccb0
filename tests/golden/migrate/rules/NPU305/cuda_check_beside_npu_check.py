# rules: NPU001 NPU305
import torch


class Prefetcher:
    def __init__(self, device):
        self.device = device
        self.is_cuda = device.type == "cuda" and torch.cuda.is_available()
        self.is_npu = device.type == "npu" and torch.npu.is_available()
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto


class Prefetcher:
    def __init__(self, device):
        self.device = device
        self.is_cuda = device.type == "cuda" and torch.cuda.is_available()
        self.is_npu = device.type == "npu" and torch.npu.is_available()
