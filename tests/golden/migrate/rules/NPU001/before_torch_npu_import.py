# rules: NPU001 NPU201
"""Trains on the NPU namespace already."""
from torch.npu import amp
import torch

scaler = amp.GradScaler()
model = Net().cuda()
# output
"""Trains on the NPU namespace already."""
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from torch.npu import amp
import torch

scaler = amp.GradScaler()
model = Net().npu()
