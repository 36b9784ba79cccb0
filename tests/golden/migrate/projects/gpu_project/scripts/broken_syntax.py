import torch

def broken(:
    return torch.zeros(1).cuda()
