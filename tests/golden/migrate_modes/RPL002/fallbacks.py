# rules: NPU001 RPL002 RPL002 RPL002 RPL002 RPL002 RPL003
# modes: replace
import torch
import torch.nn.functional as F
from torch import distributions as dist

lam = dist.Beta(alpha, alpha).sample()
rate = torch.poisson(k + 1) - k * torch.log(rate)
values, vectors = torch.linalg.eigh(cov)
pooled = F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5))
trigamma = torch.special.polygamma(1, a)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
import torch.nn.functional as F
from torch import distributions as dist
import ascend_function

lam = ascend_function.Beta(alpha, alpha).sample()
rate = ascend_function.poisson(k + 1) - k * torch.log(rate)
values, vectors = ascend_function.linalg_eigh(cov)
pooled = ascend_function.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5))
trigamma = ascend_function.polygamma(1, a)
