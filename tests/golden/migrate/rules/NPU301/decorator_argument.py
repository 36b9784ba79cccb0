# rules: NPU001 NPU301 NPU301
import torch
from torch.amp import autocast


class Head(torch.nn.Module):
    @autocast("cuda", enabled=False)
    def forward(self, x):
        return x.float()


@torch.autocast(device_type="cuda")
def step(x):
    return x
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from torch.amp import autocast


class Head(torch.nn.Module):
    @autocast("npu", enabled=False)
    def forward(self, x):
        return x.float()


@torch.autocast(device_type="npu")
def step(x):
    return x
