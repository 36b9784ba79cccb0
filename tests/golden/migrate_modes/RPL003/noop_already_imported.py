# rules: NPU001 RPL002
# modes: replace
import torch
import ascend_function

y = torch.mode(x, 0)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
import ascend_function

y = ascend_function.mode(x, 0)
