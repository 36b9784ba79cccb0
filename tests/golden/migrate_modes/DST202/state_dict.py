# rules: DST202 DST202 NPU001
# modes: distributed=main.py
# path: ckpt.py
import torch

state = model.state_dict()
model.load_state_dict(torch.load("m.pt"))
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

state = getattr(model, "module", model).state_dict()
getattr(model, "module", model).load_state_dict(torch.load("m.pt"))
