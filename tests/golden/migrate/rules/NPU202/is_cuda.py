# rules: NPU001 NPU202
import torch

if x.is_cuda:
    pass
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

if x.is_npu:
    pass
