# rules: 
# modes: portable
import torch

a = torch.load(path, map_location="cpu")
