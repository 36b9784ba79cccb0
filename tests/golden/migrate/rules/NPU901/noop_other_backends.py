# rules:
import torch

torch.backends.mkldnn.enabled = True
