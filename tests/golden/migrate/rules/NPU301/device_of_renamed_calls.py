# rules: NPU001 NPU101 NPU101 NPU101 NPU101 NPU101 NPU201 NPU301 NPU301 NPU301
import torch


def place(v, i):
    v = v.cuda(f"cuda:{torch.cuda.current_device()}")
    props = torch.cuda.get_device_properties("cuda:{}".format(i))
    torch.cuda.set_device("cuda:" + str(i))
    return v, props, torch.cuda.memory_allocated(torch.cuda.current_device())
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto


def place(v, i):
    v = v.npu(f"npu:{torch_npu.npu.current_device()}")
    props = torch_npu.npu.get_device_properties("npu:{}".format(i))
    torch_npu.npu.set_device("npu:" + str(i))
    return v, props, torch_npu.npu.memory_allocated(torch_npu.npu.current_device())
