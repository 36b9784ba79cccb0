# rules:
import torch

a = torch.load("cuda_model.pt", map_location="cpu")
b = torch.load(path, map_location={"cuda:0": "cpu"})
