# rules: NPU001 RPL001 RPL001 RPL001 RPL001 RPL001 RPL003
# modes: replace
"""Gaussian log-likelihood."""
import torch
from torch.distributions import MultivariateNormal
from torch import linalg as LA

precision = torch.inverse(cov)
sign, logdet = LA.slogdet(cov)
x = torch.linalg.solve(
    cov, y,  # keep this comment
)
dist = MultivariateNormal(mu, covariance_matrix=cov)
running = torch.logcumsumexp(scores, dim=1)
# output
"""Gaussian log-likelihood."""
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from torch.distributions import MultivariateNormal
from torch import linalg as LA
import ascend_function

precision = ascend_function.linalg_inv(cov)
sign, logdet = ascend_function.linalg_slogdet(cov)
x = ascend_function.linalg_solve(
    cov, y,  # keep this comment
)
dist = ascend_function.MultivariateNormal(mu, covariance_matrix=cov)
running = ascend_function.logcumsumexp(scores, dim=1)
