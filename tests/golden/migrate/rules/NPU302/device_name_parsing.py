# rules: NPU001 NPU302
import torch


def select_device(device=""):
    device = str(device).strip().lower().replace("cuda:", "").replace("none", "")
    return device


name = model_name.replace("cuda:", "")
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto


def select_device(device=""):
    device = str(device).strip().lower().replace("npu:", "").replace("none", "")
    return device


name = model_name.replace("cuda:", "")
