# rules: NPU001
# modes:
import torch

torch.npu.set_device(args.gpu)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

torch.npu.set_device(args.gpu)
