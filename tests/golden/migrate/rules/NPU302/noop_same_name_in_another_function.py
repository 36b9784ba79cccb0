# rules:
import torch


def label():
    arg = "cuda"
    print(arg)


def place(arg):
    return torch.device(arg)


def other():
    kind = "cuda:0"
    return {"kind": kind}
