# rules: PRT001 PRT101 PRT101 PRT101 PRT101
# modes: portable
import torch

Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
x = torch.cuda.LongTensor(3)
y = z.type(torch.cuda.FloatTensor)
f(torch.cuda.HalfTensor)
# output
import torch
import portable_device

Tensor = getattr(portable_device.module(), "FloatTensor", torch.FloatTensor) if cuda else torch.FloatTensor
x = portable_device.LongTensor(3)
y = z.to(portable_device.device(), torch.float32)
f(getattr(portable_device.module(), "HalfTensor", torch.HalfTensor))
