# rules: NPU001 NPU010 NPU010 NPU010 NPU010 NPU010 NPU010
import torch as th
import xformers.ops as xops
from flash_attn.flash_attn_interface import flash_attn_qkvpacked_func, flash_attn_varlen_func


def attend(qkv, q, k, v, cu_q, cu_k, max_q, max_k):
    packed = flash_attn_qkvpacked_func(qkv, dropout_p=0.0)
    varlen = flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k, causal=True)
    return packed, varlen, xops.memory_efficient_attention(q, k, v, xops.LowerTriangularMask())
# output
import torch as th
import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
import torch


def attend(qkv, q, k, v, cu_q, cu_k, max_q, max_k):
    packed = torch_npu.npu_fusion_attention(*qkv.unbind(2), qkv.shape[3], "BSND", scale=qkv.shape[-1] ** -0.5)[0]
    varlen = torch_npu.npu_fusion_attention(q, k, v, q.shape[1], "TND", atten_mask=torch.ones(2048, 2048, dtype=torch.bool, device=q.device).triu(1), scale=q.shape[-1] ** -0.5, actual_seq_qlen=cu_q[1:].tolist(), actual_seq_kvlen=cu_k[1:].tolist(), sparse_mode=3)[0]
    return packed, varlen, torch_npu.npu_fusion_attention(q, k, v, q.shape[2], "BSND", atten_mask=torch.ones(2048, 2048, dtype=torch.bool, device=q.device).triu(1), scale=q.shape[-1] ** -0.5, sparse_mode=2)[0]
