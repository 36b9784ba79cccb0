# rules: NPU001 NPU201
# modes: tune=safe
import torch


def build():
    return torch.nn.Linear(2, 2).cuda()
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto


def build():
    return torch.nn.Linear(2, 2).npu()
