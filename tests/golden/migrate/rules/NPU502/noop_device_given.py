# rules:
import torch

scaler = torch.amp.GradScaler(device_name)
scaler2 = torch.amp.GradScaler(device="cpu", enabled=False)
scaler3 = torch.amp.GradScaler(**opts)
with torch.random.fork_rng([0], True, 'x', 'cpu'):
    pass
