# rules: 
# modes: portable
import torch

with torch.autocast("cpu", enabled=True):
    pass
