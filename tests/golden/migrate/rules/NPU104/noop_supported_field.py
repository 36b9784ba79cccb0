# rules: NPU001 NPU101
import torch

gib = torch.cuda.get_device_properties(0).total_memory / 2**30
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

gib = torch_npu.npu.get_device_properties(0).total_memory / 2**30
