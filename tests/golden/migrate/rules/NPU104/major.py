# rules: NPU001 NPU101 NPU104
import torch

if torch.cuda.get_device_properties(0).major >= 8:
    pass
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

if torch_npu.npu.get_device_properties(0).major >= 8:
    pass
