# rules: NPU001 NPU901 NPU901 TUN003 TUN003
# modes: tune=hf32
import torch

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = False
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

torch.backends.cuda.matmul.allow_tf32 = True
torch_npu.npu.matmul.allow_hf32 = True
torch.backends.cudnn.allow_tf32 = False
torch_npu.npu.conv.allow_hf32 = False
