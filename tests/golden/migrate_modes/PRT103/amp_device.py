# rules: PRT001 PRT101 PRT101 PRT103 PRT103 PRT103 PRT103
# modes: portable
import torch
from torch.cuda.amp import autocast, GradScaler

scaler = GradScaler(init_scale=1024)
other = torch.cuda.amp.GradScaler()
plain = torch.amp.GradScaler()
with autocast(dtype=torch.float16):
    pass
# output
import torch
from torch.amp import autocast, GradScaler
import portable_device

scaler = GradScaler(portable_device.device_type(), init_scale=1024)
other = torch.amp.GradScaler(portable_device.device_type())
plain = torch.amp.GradScaler(device=portable_device.device_type())
with autocast(portable_device.device_type(), dtype=torch.float16):
    pass
