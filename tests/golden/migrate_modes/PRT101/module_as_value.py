# rules: PRT001 PRT101 PRT301
# modes: portable
import torch

device_module = torch.cuda if device.type == "cuda" else torch.cpu
CD = torch.cuda
device_module.synchronize()
# output
import torch
import portable_device

device_module = portable_device.module() if device.type == (portable_device.device_type() if portable_device.is_available() else "cuda") else torch.cpu
CD = torch.cuda
device_module.synchronize()
