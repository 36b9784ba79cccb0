# rules: NPU001 RPL002 RPL003
# modes: replace
import torch

Gamma = torch.distributions.Gamma
sample = Gamma(concentration, rate).rsample()
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
import ascend_function

Gamma = torch.distributions.Gamma
sample = ascend_function.Gamma(concentration, rate).rsample()
