# rules: NPU001 NPU111 NPU111
import torch

dtype = torch.cuda.FloatTensor if flag else torch.FloatTensor
idx = torch.cuda.LongTensor([1, 2])
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

dtype = torch_npu.npu.FloatTensor if flag else torch.FloatTensor
idx = torch_npu.npu.LongTensor([1, 2])
