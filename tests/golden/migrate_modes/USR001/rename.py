# rules: NPU001 USR001 USR001 USR004
# modes: rules=rules.json
import ops
import torch

ops.cuda_sync()
torch.cuda.synchronize()
# output
import ops
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
import mylib

ops.npu_sync()
mylib.sync()
