# rules: NPU001 USR001 USR001 USR001 USR001 USR004
# modes: rules=msft_rules.json
import ops
import torch

ops.cuda_sync()
torch.cuda.synchronize()
y = model.fused_cuda(x) + fused_cuda(x)
# output
import ops
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
import mylib

ops.npu_sync()
mylib.sync()
y = model.fused_npu(x) + fused_npu(x)
