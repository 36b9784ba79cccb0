# rules: NPU001 NPU113 NPU113
import torch

x = x.type('torch.cuda.HalfTensor')
torch.set_default_tensor_type("torch.cuda.FloatTensor")
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

x = x.type('torch.npu.HalfTensor')
torch.set_default_tensor_type("torch.npu.FloatTensor")
