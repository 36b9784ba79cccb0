# rules:
import torch

x = torch.FloatTensor(2)
name = "cuda"
