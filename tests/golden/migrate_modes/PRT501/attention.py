# rules: PRT501 PRT501 PRT501 PRT501 PRT501 PRT501
# modes: portable
import torch
import xformers.ops as xops
from flash_attn import flash_attn_func, flash_attn_qkvpacked_func


def attend(q, k, v, qkv, causal):
    out = flash_attn_func(q, k, v, dropout_p=0.1, causal=causal)
    packed = flash_attn_qkvpacked_func(qkv, causal=True)
    return out, packed, xops.memory_efficient_attention(q, k, v, xops.LowerTriangularMask())
# output
import torch
import torch.nn.attention.bias


def attend(q, k, v, qkv, causal):
    out = torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), attn_mask=torch.nn.attention.bias.causal_lower_right(q.shape[1], k.shape[1]) if causal else None, dropout_p=0.1, enable_gqa=True).transpose(1, 2)
    packed = torch.nn.functional.scaled_dot_product_attention(*qkv.transpose(1, 3).unbind(2), is_causal=True, enable_gqa=True).transpose(1, 2)
    return out, packed, torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True, enable_gqa=True).transpose(1, 2)
