# rules: PRT001 PRT301 PRT301 PRT301 PRT301 PRT301 PRT301
# modes: portable
import torch

a = torch.zeros(3, device="cuda")
b = torch.device('cuda', rank)
c = torch.device(f"cuda:{rank}")
d = x.to("cuda:0")
device = "cuda:{}".format(rank)
if t.device.type == "cuda":
    pass
# output
import torch
import portable_device

a = torch.zeros(3, device=portable_device.device_type())
b = torch.device(portable_device.device_type(), rank)
c = torch.device(f"{portable_device.device_type()}:{rank}")
d = x.to(f"{portable_device.device_type()}:0")
device = f"{portable_device.device_type()}:{{}}".format(rank)
if t.device.type == (portable_device.device_type() if portable_device.is_available() else "cuda"):
    pass
