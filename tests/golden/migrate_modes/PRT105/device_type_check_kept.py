# rules: PRT001 PRT102 PRT105 PRT301
# modes: portable
import torch

if device.type == "cuda" and torch.cuda.get_device_capability(device)[0] >= 8:
    dtype = torch.bfloat16
if device.type == "cuda":
    dtype = torch.float16
# output
import torch
import portable_device

if device.type == "cuda" and torch.cuda.get_device_capability(device)[0] >= 8:
    dtype = torch.bfloat16
if device.type == (portable_device.device_type() if portable_device.is_available() else "cuda"):
    dtype = torch.float16
