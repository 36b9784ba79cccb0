# rules: NPU001 NPU101 NPU201 NPU302
# modes: distributed=main.py:model
# path: trainer.py
import torch

local_rank = 1
device = f"cuda:{local_rank}"
torch.cuda.set_device(local_rank)
net = Net().cuda()
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

local_rank = 1
device = f"npu:{local_rank}"
torch_npu.npu.set_device(local_rank)
net = Net().npu()
