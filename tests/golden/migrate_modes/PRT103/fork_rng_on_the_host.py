# rules: PRT001 PRT103 PRT103 PRT301
# modes: portable
import torch

with torch.random.fork_rng(devices=[0], device_type="cuda"):
    noise = torch.rand(2)
with torch.random.fork_rng(enabled=True):
    mask = torch.rand(2) > 0.5
# output
import torch
import portable_device

with portable_device.fork_rng(devices=[0], device_type=portable_device.device_type()):
    noise = torch.rand(2)
with portable_device.fork_rng(enabled=True):
    mask = torch.rand(2) > 0.5
