# rules: NPU001 TUN103 TUN103
# modes: tune=drop-last
from torch.utils.data import DataLoader, DistributedSampler

train = DataLoader(range(10), batch_size=4, shuffle=True)
ranked = DataLoader(range(10), batch_size=4, sampler=DistributedSampler(range(10)))
# output
from torch.utils.data import DataLoader, DistributedSampler
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

train = DataLoader(range(10), batch_size=4, shuffle=True, drop_last=True)
ranked = DataLoader(range(10), batch_size=4, sampler=DistributedSampler(range(10)), drop_last=True)
