# rules: NPU001 NPU112
import torch

x = torch.cuda.DoubleTensor(3)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

x = torch_npu.npu.DoubleTensor(3)
