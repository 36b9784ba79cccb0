# rules:
import torch

self.is_cuda = True
key = "is_cuda"
