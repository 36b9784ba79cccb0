# rules: NPU001 NPU502 NPU502 NPU502
import torch

scaler = torch.amp.GradScaler()
scaler2 = torch.amp.GradScaler(init_scale=2.0**10,)
with torch.random.fork_rng(devices=[0]):
    pass
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

scaler = torch.amp.GradScaler(device="npu")
scaler2 = torch.amp.GradScaler(init_scale=2.0**10, device="npu",)
with torch.random.fork_rng(devices=[0], device_type="npu"):
    pass
