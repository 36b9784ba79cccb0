# rules: PRT001 PRT101 PRT201
# modes: portable
import torch

x = torch.zeros(2).cuda(torch.cuda.current_device(), non_blocking=True)
# output
import torch
import portable_device

x = torch.zeros(2).to(portable_device.device(portable_device.current_device()), non_blocking=True)
