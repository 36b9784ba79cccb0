# rules: NPU001 NPU304
import torch

y = x.to(device=local_rank)
z = x.to(device=dev)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

y = x.to(device=f"npu:{local_rank}")
z = x.to(device=dev)
