# rules: NPU001 NPU201 NPU302
import torch


def move(batch, device, half, other, kind="cuda"):
    batch = batch.cuda()
    a = batch.to(device)
    b = batch.to(torch.float16)
    c = batch.to(half.dtype)
    d = batch.to(memory_format)
    return batch.to(kind)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto


def move(batch, device, half, other, kind="npu"):
    batch = batch.npu()
    a = batch.to(device)
    b = batch.to(torch.float16)
    c = batch.to(half.dtype)
    d = batch.to(memory_format)
    return batch.to(kind)
