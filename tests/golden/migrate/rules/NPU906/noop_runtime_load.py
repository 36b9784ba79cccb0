# rules: NPU001 NPU201 NPU905 NPU905
import torch
from torch.utils.cpp_extension import load

fused = load(name="fused", sources=["fused.cpp"])
x = torch.zeros(2).cuda()
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from torch.utils.cpp_extension import load

fused = load(name="fused", sources=["fused.cpp"])
x = torch.zeros(2).npu()
