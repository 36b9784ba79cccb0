# rules:
import torch

ok = torch.backends.mkl.is_available()  # cufft elsewhere
