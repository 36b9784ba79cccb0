# rules: NPU001 NPU304 NPU304 NPU304 NPU304
import torch

model = model.to(args.local_rank)
x = x.to(0, non_blocking=True)
y = y.to(rank)
z = batch.to(self.gpu_id)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

model = model.to(f"npu:{args.local_rank}")
x = x.to("npu:0", non_blocking=True)
y = y.to(f"npu:{rank}")
z = batch.to(f"npu:{self.gpu_id}")
