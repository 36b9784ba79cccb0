# rules: NPU001 NPU101 NPU101 NPU103 NPU103
import torch
from torch.cuda import nvtx

nvtx.range_push("step")
torch.cuda.nvtx.range_pop()
outs = torch.cuda.comm.scatter(torch.ones(4), [0, 1])
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
from torch.cuda import nvtx

torch_npu.npu.mstx.range_push("step")
torch_npu.npu.mstx.range_pop()
outs = torch.cuda.comm.scatter(torch.ones(4), [0, 1])
