# rules: NPU001
import torch

if torch.npu.is_available():
    torch.npu.set_device(0)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

if torch.npu.is_available():
    torch.npu.set_device(0)
