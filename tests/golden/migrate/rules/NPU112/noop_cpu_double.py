# rules:
import torch

x = torch.DoubleTensor(3)  # runs on cuda later
