# rules: NPU001 NPU201 NPU201 NPU201
import torch

model = Net().cuda()
x = batch["image"].cuda(rank, non_blocking=True)
moved = list(map(lambda t: t.cuda(), tensors))
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

model = Net().npu()
x = batch["image"].npu(rank, non_blocking=True)
moved = list(map(lambda t: t.npu(), tensors))
