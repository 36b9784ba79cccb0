# rules: NPU001 TUN102
# modes: tune=ddp-broadcast-buffers
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(torch.nn.BatchNorm1d(2), device_ids=[0])
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(torch.nn.BatchNorm1d(2), device_ids=[0], broadcast_buffers=False)
