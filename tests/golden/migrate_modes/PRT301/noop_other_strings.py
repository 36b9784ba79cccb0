# rules: 
# modes: portable
import torch

path = "cuda_checkpoint.pt"
print("running on cuda")
a = torch.zeros(3, device="cpu")
