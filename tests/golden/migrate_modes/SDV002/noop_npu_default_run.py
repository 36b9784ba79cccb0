# rules: 
# modes:
import torch

torch.npu.set_device(args.gpu)
