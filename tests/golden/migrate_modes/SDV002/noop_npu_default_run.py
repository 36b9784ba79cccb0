# rules: NPU001
# modes:
import torch

torch.npu.set_device(args.gpu)
# output
import torch
import torch_npu

torch.npu.set_device(args.gpu)
