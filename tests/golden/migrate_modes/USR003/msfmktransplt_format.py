# rules: NPU001 USR003 USR003 USR003 USR003
# modes: rules=msft_rules.json
import torch

state = torch.load("ckpt.pt", "cuda:0")
loader = torch.utils.data.DataLoader(data, batch_size=4, pin_memory=True)
scheduler.step(0.1)
other = torch.load("other.pt")
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

state = torch.load("ckpt.pt", "cpu")
loader = torch.utils.data.DataLoader(data, batch_size=4)
scheduler.step(0.5)
other = torch.load("other.pt", map_location="cpu")
