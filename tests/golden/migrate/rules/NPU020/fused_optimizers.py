# rules: NPU020 NPU020 NPU020 NPU020 NPU020 NPU201
import torch
from apex.optimizers import FusedAdam, FusedSGD

model = torch.nn.Linear(2, 2).cuda()
adamw = FusedAdam(model.parameters(), lr=1e-3, set_grad_none=True)
adam = FusedAdam(model.parameters(), 1e-3, adam_w_mode=False, weight_decay=0.1)
sgd = FusedSGD(model.parameters(), 0.1, momentum=0.9)
# output
import torch
import torch_npu.optim

model = torch.nn.Linear(2, 2).npu()
adamw = torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
adam = torch_npu.optim.NpuFusedAdam(model.parameters(), 1e-3, weight_decay=0.1)
sgd = torch_npu.optim.NpuFusedSGD(model.parameters(), 0.1, momentum=0.9)
