# rules:
import torch

traced = torch.jit.trace(model, example)
