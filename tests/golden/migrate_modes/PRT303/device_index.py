# rules: PRT001 PRT303 PRT303 PRT303
# modes: portable
import torch

x = x.to(local_rank)
y = model.to(device=self.gpu_id)
z = x.to(0)
w = x.to(dev)
# output
import torch
import portable_device

x = x.to(portable_device.device(local_rank))
y = model.to(device=portable_device.device(self.gpu_id))
z = x.to(portable_device.device(0))
w = x.to(dev)
