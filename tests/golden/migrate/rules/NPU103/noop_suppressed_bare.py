# rules:
import torch

torch.cuda.nvtx.range_push("x")  # ascendify: ignore
