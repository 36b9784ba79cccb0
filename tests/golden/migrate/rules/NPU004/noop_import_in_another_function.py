# rules: NPU001 NPU101
import torch


def on_npu():
    import torch_npu

    return torch_npu.npu.current_device()


def on_gpu():
    torch.cuda.set_device(0)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto


def on_npu():
    import torch_npu

    return torch_npu.npu.current_device()


def on_gpu():
    torch_npu.npu.set_device(0)
