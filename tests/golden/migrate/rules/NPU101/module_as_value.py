# rules: NPU001 NPU101 NPU101
import torch

device_module = torch.cuda if torch.cuda.is_available() else torch.cpu
device_module.synchronize()
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

device_module = torch_npu.npu if torch_npu.npu.is_available() else torch.cpu
device_module.synchronize()
