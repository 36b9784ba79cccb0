# rules: NPU001 TUN101 TUN101 TUN101 TUN101
# modes: tune=fused-optimizer
import torch
from torch.optim import AdamW

params = [torch.nn.Parameter(torch.ones(2))]
adamw = AdamW(params, lr=1e-3, weight_decay=0.01)
adam = torch.optim.Adam(params, 1e-3, (0.9, 0.99))
sgd = torch.optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
import torch_npu.optim
from torch.optim import AdamW

params = [torch.nn.Parameter(torch.ones(2))]
adamw = torch_npu.optim.NpuFusedAdamW(params, lr=1e-3, weight_decay=0.01)
adam = torch_npu.optim.NpuFusedAdam(params, 1e-3, (0.9, 0.99))
sgd = torch_npu.optim.NpuFusedSGD(params, lr=0.1, momentum=0.9, nesterov=True)
