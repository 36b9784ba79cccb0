"""Every flash-attn and xformers form ascendify ports, beside torch's own attention on the CPU.

``python attention_forms.py`` prints, as one JSON line, each form's output computed by the CUDA
library in float32, float16 and bfloat16; with ``--reference`` the same attention computed by torch's
``scaled_dot_product_attention`` on the CPU. The NPU migration, run under the npu stand-in, and the
portable one must print what the reference prints (within the dtype's rounding); ``--portable``
leaves out the packed variable-length form, which has no torch counterpart.
"""

import json
import sys

import torch
import torch.nn.functional as F
import xformers.ops as xops
from flash_attn import flash_attn_func, flash_attn_qkvpacked_func
from torch.nn.attention.bias import causal_lower_right

reference = "--reference" in sys.argv
portable = "--portable" in sys.argv
device = "cpu" if reference else "cuda"


def sdpa(query, key, value, **options):
    """torch's attention on (batch, sequence, heads, head dim) tensors."""
    moved = (t.transpose(1, 2) for t in (query, key, value))
    return F.scaled_dot_product_attention(*moved, **options).transpose(1, 2)


def varlen_causal(q, k, v, cu_seqlens):
    # Its own import: the portable migration has no counterpart and keeps it.
    from flash_attn import flash_attn_varlen_func

    return flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens, 5, 5, causal=True)


def forms(dtype):
    generator = torch.Generator().manual_seed(0)

    def rand(*shape):
        return torch.randn(*shape, generator=generator).to(device=device, dtype=dtype)

    q, k, v = rand(2, 6, 4, 8), rand(2, 6, 4, 8), rand(2, 6, 4, 8)
    k_long, v_long = rand(2, 9, 4, 8), rand(2, 9, 4, 8)  # more keys than queries
    k_grouped, v_grouped = rand(2, 6, 2, 8), rand(2, 6, 2, 8)  # grouped-query: 2 key heads
    qkv = rand(2, 6, 3, 4, 8)
    cu_seqlens = torch.tensor([0, 2, 7, 10], dtype=torch.int32, device=device)
    q_packed, k_packed, v_packed = rand(10, 4, 8), rand(10, 4, 8), rand(10, 4, 8)
    scale = None
    if reference:
        bounds = list(zip(cu_seqlens[:-1].tolist(), cu_seqlens[1:].tolist(), strict=True))
        outputs = {
            "causal": sdpa(q, k, v, is_causal=True),
            "causal_more_keys": sdpa(q, k_long, v_long, attn_mask=causal_lower_right(6, 9)),
            "scaled": sdpa(q, k, v, scale=0.3),
            "grouped_query": sdpa(q, k_grouped, v_grouped, is_causal=True, enable_gqa=True),
            "qkvpacked": sdpa(*qkv.unbind(2), scale=0.5),
            "varlen_causal": torch.cat(
                [
                    sdpa(
                        q_packed[None, s:e],
                        k_packed[None, s:e],
                        v_packed[None, s:e],
                        is_causal=True,
                    )[0]
                    for s, e in bounds
                ]
            ),
            "xformers_causal": sdpa(q, k, v, is_causal=True),
            "xformers": sdpa(q, k_long, v_long),
            "expressions": sdpa(
                q * 0.5, k_long[:, :7], v_long[:, :7], attn_mask=causal_lower_right(6, 7)
            ),
        }
    else:
        outputs = {
            "causal": flash_attn_func(q, k, v, causal=True),
            "causal_more_keys": flash_attn_func(q, k_long, v_long, 0.0, scale, True),
            "scaled": flash_attn_func(q, k, v, softmax_scale=0.3),
            "grouped_query": flash_attn_func(q, k_grouped, v_grouped, causal=True),
            "qkvpacked": flash_attn_qkvpacked_func(qkv, softmax_scale=0.5),
            "xformers_causal": xops.memory_efficient_attention(
                q, k, v, attn_bias=xops.LowerTriangularMask()
            ),
            "xformers": xops.memory_efficient_attention(q, k_long, v_long),
            # expressions as arguments, read twice by the causal mask's lengths
            "expressions": flash_attn_func(q * 0.5, k_long[:, :7], v_long[:, :7], causal=True),
        }
        if not portable:
            outputs["varlen_causal"] = varlen_causal(q_packed, k_packed, v_packed, cu_seqlens)
    if portable:
        outputs.pop("varlen_causal", None)
    return {name: out.float().flatten().tolist() for name, out in outputs.items()}


DTYPES = ("float32", "float16", "bfloat16")
print(json.dumps({dtype: forms(getattr(torch, dtype)) for dtype in DTYPES}))
