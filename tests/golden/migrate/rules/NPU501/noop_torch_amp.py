# rules:
import torch
from torch.amp import autocast

with autocast(device_type=device.type):
    pass
