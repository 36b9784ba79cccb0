# rules: NPU001 NPU305 NPU305
import torch


def pick(x):
    if x.device.type == "npu":
        return 1
    elif x.device.type == "cuda":
        return x.cuda()
    return 0


if torch.npu.is_available():
    device = "npu"
elif torch.cuda.is_available():
    device = "cuda"
else:
    device = "cpu"
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto


def pick(x):
    if x.device.type == "npu":
        return 1
    elif x.device.type == "cuda":
        return x.cuda()
    return 0


if torch.npu.is_available():
    device = "npu"
elif torch.cuda.is_available():
    device = "cuda"
else:
    device = "cpu"
