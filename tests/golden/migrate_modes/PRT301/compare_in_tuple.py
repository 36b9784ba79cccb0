# rules: PRT001 PRT301
# modes: portable
import torch

if device.type in ("cuda",) and x:
    pass
# output
import torch
import portable_device

if device.type in ((portable_device.device_type() if portable_device.is_available() else "cuda"),) and x:
    pass
