# rules:
import torch

fn = tensor.cuda
flag = torch.cuda
cuda = 3
