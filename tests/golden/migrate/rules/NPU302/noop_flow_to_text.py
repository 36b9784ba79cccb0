# rules:
import torch


def label(arg="cuda"):
    name = "cuda:0"
    print(f"{arg} {name}")
    table = {"cuda": 1}
    return table[name]


kind = "cuda"
path = kind + "_ckpt.pt"
torch.save({}, path)
