# rules:
import torch

msg = "expected torch.cuda.FloatTensor, got %s"
kind = "torch.cuda.NoSuchTensor"
