# rules: SDV001
# modes: specify_device
import torch


def build():
    return torch.nn.Linear(2, 2)
# output
import torch
import os
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
DEVICE_ID = int(os.environ.get("DEVICE_ID", "0"))  # the device of this process
torch_npu.npu.set_device(DEVICE_ID)


def build():
    return torch.nn.Linear(2, 2)
