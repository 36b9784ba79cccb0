# rules: 
# modes:
import torch

x = torch.ones(1)
