# rules: NPU001 NPU201 NPU306 NPU306
import torch


def move(batch, target, model):
    model.cuda()
    batch = batch.to(target)
    return batch.to(device=target.index, non_blocking=True)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto


def move(batch, target, model):
    model.npu()
    batch = batch.to(f"npu:{target}" if isinstance(target, int) else target)
    return batch.to(device=f"npu:{target.index}" if isinstance(target.index, int) else target.index, non_blocking=True)
