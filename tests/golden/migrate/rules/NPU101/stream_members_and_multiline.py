# rules: NPU001 NPU101 NPU101 NPU101
import torch

s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
f = (torch.cuda
     .Stream.wait_stream)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

s = torch_npu.npu.Stream()
s.wait_stream(torch_npu.npu.current_stream())
f = (torch_npu.npu.Stream.wait_stream)
