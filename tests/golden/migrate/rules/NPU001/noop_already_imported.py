# rules: NPU201
import torch
try:
    import torch_npu
except ImportError:
    torch_npu = None

x = torch.ones(1).cuda()
# output
import torch
try:
    import torch_npu
except ImportError:
    torch_npu = None

x = torch.ones(1).npu()
