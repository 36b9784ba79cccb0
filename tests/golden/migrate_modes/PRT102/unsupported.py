# rules: PRT102 PRT102 PRT102
# modes: portable
import torch

props = torch.cuda.get_device_properties(0)
torch.cuda.nvtx.range_push("step")
g = torch.cuda.CUDAGraph()
