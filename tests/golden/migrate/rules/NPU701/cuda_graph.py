# rules: NPU001 NPU701 NPU701 NPU701
import torch
from torch.cuda import CUDAGraph

g = torch.cuda.CUDAGraph()
g2 = CUDAGraph()
with torch.cuda.graph(g):
    pass
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from torch.cuda import CUDAGraph

g = torch_npu.npu.NPUGraph()
g2 = torch_npu.npu.NPUGraph()
with torch_npu.npu.graph(g):
    pass
