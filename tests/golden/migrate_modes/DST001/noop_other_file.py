# rules: 
# modes: distributed=train.py
# path: models/net.py
import torch

print(torch.ones(1))
