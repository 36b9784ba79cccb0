# rules:
import torch

with torch.autograd.profiler.record_function("nvtx-free"):
    pass
