# rules:
import torch

model_name = "cuda"
path = "cuda:0"
if mode == "cuda":
    pass
cfg["arch"] = "cuda"
