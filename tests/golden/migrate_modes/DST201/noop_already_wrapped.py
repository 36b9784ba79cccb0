# rules: NPU001 NPU201
# modes: distributed=main.py
# path: trainer.py
import torch

model = Net().cuda()
model = torch.nn.parallel.DistributedDataParallel(model)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

model = Net().npu()
model = torch.nn.parallel.DistributedDataParallel(model)
