# rules: PRT001 PRT301
# modes: portable
import torch


def select_device(device=""):
    device = str(device).strip().lower().replace("cuda:", "").replace("none", "")
    return device


name = model_name.replace("cuda:", "")
# output
import torch
import portable_device


def select_device(device=""):
    device = str(device).strip().lower().replace(f"{portable_device.device_type() if portable_device.is_available() else 'cuda'}:", "").replace("none", "")
    return device


name = model_name.replace("cuda:", "")
