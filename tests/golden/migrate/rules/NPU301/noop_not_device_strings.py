# rules:
import torch

torch.save(state, "cuda_ckpt.pt")
print("running on cuda")  # cuda in a comment
logger.info("cuda:0 is busy")
open("cuda", "w")
x = torch.zeros(3, device="cuda_like")
name = f"cuda:{rank}"
doc = """device='cuda'"""
