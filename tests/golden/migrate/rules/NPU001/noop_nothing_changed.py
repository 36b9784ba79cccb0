# rules:
import torch

print(torch.ones(1))
