# rules:
# modes: replace
import torch
import numpy as np
from torch.distributions import MultivariateNormal

values, indices = torch.cummax(x, dim=0)  # _cummax_helper has NPU kernels
chol = torch.linalg.cholesky(cov)  # linalg_cholesky has an NPU kernel in 2.13
inverse = np.linalg.inv(matrix)  # not torch
if isinstance(dist, MultivariateNormal):  # not a call
    solve = torch.linalg.solve
det = matrix.det()  # a method: the receiver's type is unknown
