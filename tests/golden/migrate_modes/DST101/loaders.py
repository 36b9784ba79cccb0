# rules: DST101 DST101 NPU001
# modes: distributed=main.py
# path: data.py
import torch
from torch.utils.data import DataLoader

train = DataLoader(train_set, batch_size=32, shuffle=True)
val = torch.utils.data.DataLoader(val_set, batch_size=64)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from torch.utils.data import DataLoader

train = DataLoader(train_set, batch_size=32, sampler=torch.utils.data.distributed.DistributedSampler(train_set, shuffle=True))
val = torch.utils.data.DataLoader(val_set, batch_size=64, sampler=torch.utils.data.distributed.DistributedSampler(val_set, shuffle=False))
