# rules:
# modes: tune=all
import torch

none = torch.utils.data.DataLoader(range(10), num_workers=0)
said = torch.utils.data.DataLoader(range(10), num_workers=2, persistent_workers=False)
