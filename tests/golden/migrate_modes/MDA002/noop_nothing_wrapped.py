# rules: 
# modes: modelarts
import torch

x = torch.ones(1)
