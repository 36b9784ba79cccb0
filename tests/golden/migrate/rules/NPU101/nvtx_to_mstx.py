# rules: NPU001 NPU101 NPU101 NPU101 NPU103
import torch

torch.cuda.nvtx.range_push("step")
torch.cuda.nvtx.mark("here")
torch.cuda.nvtx.range_pop()
with torch.cuda.nvtx.range("block"):
    pass
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

torch_npu.npu.mstx.range_push("step")
torch_npu.npu.mstx.mark("here")
torch_npu.npu.mstx.range_pop()
with torch.cuda.nvtx.range("block"):
    pass
