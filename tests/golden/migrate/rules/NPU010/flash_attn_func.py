# rules: NPU001 NPU010 NPU010 NPU010
import torch
from flash_attn import flash_attn_func


def attend(q, k, v, scale, causal, training):
    out = flash_attn_func(q, k, v, causal=True)
    return flash_attn_func(q, k, v, 0.1 if training else 0.0, scale, causal) + out
# output
import torch
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto


def attend(q, k, v, scale, causal, training):
    out = torch_npu.npu_fusion_attention(q, k, v, q.shape[2], "BSND", atten_mask=torch.ones(2048, 2048, dtype=torch.bool, device=q.device).triu(1), scale=q.shape[-1] ** -0.5, sparse_mode=3)[0]
    return torch_npu.npu_fusion_attention(q, k, v, q.shape[2], "BSND", atten_mask=torch.ones(2048, 2048, dtype=torch.bool, device=q.device).triu(1) if causal else None, scale=scale if scale is not None else q.shape[-1] ** -0.5, keep_prob=1 - (0.1 if training else 0.0), sparse_mode=3 if causal else 0)[0] + out
