# rules: MDA001 MDA002 NPU001
# modes: modelarts
"""Doc."""
import torch

state = torch.load("ckpt.pt")
# output
"""Doc."""
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from ascend_modelarts_function import ModelArtsPathManager

state = torch.load(ModelArtsPathManager().get_path("ckpt.pt"))
