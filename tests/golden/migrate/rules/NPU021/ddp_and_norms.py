# rules: NPU001 NPU021 NPU021 NPU021 NPU021 NPU021
import apex
import torch
from apex.normalization import FusedLayerNorm, FusedRMSNorm

norm = FusedLayerNorm(16, eps=1e-6)
rms = FusedRMSNorm(16)
model = apex.parallel.DistributedDataParallel(torch.nn.Sequential(norm, rms), delay_allreduce=True)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

norm = torch.nn.LayerNorm(16, eps=1e-6)
rms = torch.nn.RMSNorm(16, eps=1e-5)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Sequential(norm, rms))
