# rules: 
# modes: rules=rules.json
import torch

a = torch.load(path, map_location="cpu")
