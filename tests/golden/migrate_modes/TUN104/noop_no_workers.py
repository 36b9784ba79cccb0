# rules:
# modes: tune=all
import torch

inline = torch.utils.data.DataLoader(range(10), num_workers=0)
default = torch.utils.data.DataLoader(range(10))
