# rules: NPU001 NPU602 NPU602
import torch
from torch.autograd import profiler

with torch.autograd.profiler.profile(use_cuda=True) as prof:
    pass
with profiler.profile(use_cuda=args.gpu, record_shapes=True):
    pass
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from torch.autograd import profiler

with torch.autograd.profiler.profile(use_device="npu") as prof:
    pass
with profiler.profile(use_device="npu" if args.gpu else None, record_shapes=True):
    pass
