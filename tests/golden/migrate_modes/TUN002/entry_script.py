# rules: NPU001 NPU201 TUN002
# modes: tune=TUN002
import torch

torch.nn.Linear(2, 2).cuda()
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
torch_npu.npu.config.allow_internal_format = False

torch.nn.Linear(2, 2).npu()
