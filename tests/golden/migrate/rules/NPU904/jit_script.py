# rules: NPU904 NPU904 NPU904
import torch
from torch.jit import script


@torch.jit.script
def f(x):
    return x * 2


g = script(f)
