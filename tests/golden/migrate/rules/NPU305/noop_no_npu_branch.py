# rules: NPU001 NPU201 NPU302
import torch


def pick(x):
    if x.device.type == "cuda":
        return x.cuda()
    elif x.device.type == "mps":
        return x
    return x.cpu()
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto


def pick(x):
    if x.device.type == "npu":
        return x.npu()
    elif x.device.type == "mps":
        return x
    return x.cpu()
