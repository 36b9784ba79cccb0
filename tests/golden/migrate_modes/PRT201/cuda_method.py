# rules: PRT001 PRT201 PRT201 PRT201 PRT201
# modes: portable
import torch

model = Net().cuda()
x = batch.cuda(non_blocking=True)
y = batch.cuda(rank)
z = batch.cuda(device=dev, non_blocking=False)
# output
import torch
import portable_device

model = Net().to(portable_device.device())
x = batch.to(portable_device.device(), non_blocking=True)
y = batch.to(portable_device.device(rank))
z = batch.to(portable_device.device(dev), non_blocking=False)
