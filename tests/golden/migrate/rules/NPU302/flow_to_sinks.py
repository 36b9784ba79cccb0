# rules: NPU001 NPU101 NPU302 NPU302 NPU302 NPU302 NPU303
import torch


def main_worker(gpu, args):
    loc = "cuda:{}".format(args.gpu)
    checkpoint = torch.load(args.resume, map_location=loc)


def make():
    arg = "cuda:0"
    return torch.device(arg)


kind = "cuda" if torch.cuda.is_available() else "cpu"
x = torch.zeros(2, device=kind)


def place(t, A="cpu"):
    return t.to(A)


place(x, A="cuda")
place(x, "cuda")
arch = "cuda"
print(arch)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto


def main_worker(gpu, args):
    loc = "npu:{}".format(args.gpu)
    checkpoint = torch.load(args.resume, map_location=loc)


def make():
    arg = "npu:0"
    return torch.device(arg)


kind = "npu" if torch_npu.npu.is_available() else "cpu"
x = torch.zeros(2, device=kind)


def place(t, A="cpu"):
    return t.to(A)


place(x, A="npu")
place(x, "npu")
arch = "cuda"
print(arch)
