# rules: NPU001 NPU102
import torch

torch.cuda.get_device_capability()
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

torch_npu.npu.get_device_capability()
