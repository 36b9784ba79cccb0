# rules: PRT001 PRT101 PRT101 PRT101 PRT102 PRT103 PRT103 PRT103
# modes: portable
import torch
from torch.cuda.amp.autocast_mode import autocast
from torch.cuda.amp.common import amp_definitely_not_available
from torch.cuda.amp.grad_scaler import GradScaler as TorchGradScaler


class GradScaler(TorchGradScaler):
    pass


def step(model, x):
    scaler = TorchGradScaler(init_scale=2.0**10, enabled=not amp_definitely_not_available())
    with autocast(dtype=torch.bfloat16):
        loss = model(x).sum()
    scaler.scale(loss).backward()
    return torch.cuda.amp.grad_scaler.GradScaler()
# output
import torch
from torch.amp import autocast
from torch.cuda.amp.common import amp_definitely_not_available
from torch.amp import GradScaler as TorchGradScaler
import portable_device


class GradScaler(TorchGradScaler):
    pass


def step(model, x):
    scaler = TorchGradScaler(portable_device.device_type(), init_scale=2.0**10, enabled=not amp_definitely_not_available())
    with autocast(portable_device.device_type(), dtype=torch.bfloat16):
        loss = model(x).sum()
    scaler.scale(loss).backward()
    return torch.amp.GradScaler(portable_device.device_type())
