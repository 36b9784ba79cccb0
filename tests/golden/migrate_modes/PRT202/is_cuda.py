# rules: PRT202 PRT202
# modes: portable
import torch

if x.is_cuda and not y.is_cuda:
    pass
# output
import torch

if (x.device.type != "cpu") and not (y.device.type != "cpu"):
    pass
