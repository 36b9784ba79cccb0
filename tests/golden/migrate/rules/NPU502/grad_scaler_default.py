# rules: NPU001 NPU502 NPU502
import torch

scaler = torch.amp.GradScaler()
scaler2 = torch.amp.GradScaler(init_scale=2.0**10)
# output
import torch
import torch_npu

scaler = torch.amp.GradScaler("npu")
scaler2 = torch.amp.GradScaler("npu", init_scale=2.0**10)
