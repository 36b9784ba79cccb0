# rules: PRT001 PRT302 PRT302 PRT302 PRT302
# modes: portable
import torch

a = torch.load(path, map_location="cuda:0")
b = torch.load(path, map_location={"cuda:1": "cuda:0"})
c = torch.load(path, map_location="cuda")
d = torch.load(path, map_location=f"cuda:{args.local_rank}")
# output
import torch
import portable_device

a = torch.load(path, map_location=portable_device.device(0))
b = torch.load(path, map_location={"cuda:1": portable_device.device(0)})
c = torch.load(path, map_location=portable_device.device_type())
d = torch.load(path, map_location=portable_device.device(args.local_rank))
