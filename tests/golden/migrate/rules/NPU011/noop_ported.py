# rules: NPU001 NPU010 NPU010
import torch
from flash_attn import flash_attn_func

q = torch.ones(1, 2, 1, 4)
out = flash_attn_func(q, q, q)
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto

q = torch.ones(1, 2, 1, 4)
out = torch_npu.npu_fusion_attention(q, q, q, q.shape[2], "BSND", scale=q.shape[-1] ** -0.5)[0]
