"""CUDA-only libraries with an exact torch_npu (or torch) counterpart: fused attention and fused
optimizers.

Read from the torch_npu 2.13.0 wheel: ``npu_fusion_attention``'s schema and docstring
(``torch_npu/_op_plugin_docs.py``) and the constructors of ``torch_npu/optim/npu_fused_*.py``; the
CUDA side from flash-attn 2.x's ``flash_attn_interface.py`` and xformers' ``memory_efficient_attention``.
"""

from __future__ import annotations

from dataclasses import dataclass

FUSION_ATTENTION = "torch_npu.npu_fusion_attention"
SCALED_DOT_PRODUCT_ATTENTION = "torch.nn.functional.scaled_dot_product_attention"
# The portable spelling of flash-attn's causal mask (aligned to the bottom-right corner).
CAUSAL_LOWER_RIGHT = "torch.nn.attention.bias.causal_lower_right"

# npu_fusion_attention's sparse_mode: 2 is leftUpCausal (the lower triangle from the top-left
# corner: xformers' LowerTriangularMask), 3 is rightDownCausal (from the bottom-right corner:
# flash-attn >= 2.1's causal=True). Both read atten_mask as the compressed 2048x2048 upper triangle
# (True = masked, "优化后的压缩下三角矩阵(2048*2048)").
SPARSE_MODE_TOP_LEFT_CAUSAL = 2
SPARSE_MODE_BOTTOM_RIGHT_CAUSAL = 3
COMPRESSED_MASK_SIZE = 2048


@dataclass(frozen=True)
class AttentionForm:
    """A CUDA-only attention function with a torch_npu port."""

    qualified: tuple[str, ...]  # the names it is reached by
    parameters: tuple[str, ...]  # the parameters a port reads, in their positional order
    # Parameters the port cannot express unless left at this default (name -> default's source).
    must_default: dict[str, str]
    layout: str  # npu_fusion_attention's input_layout


_FLASH_UNSUPPORTED = {
    "window_size": "(-1, -1)",
    "softcap": "0.0",
    "alibi_slopes": "None",
    "return_attn_probs": "False",
}


def _flash(name: str) -> tuple[str, ...]:
    return (f"flash_attn.{name}", f"flash_attn.flash_attn_interface.{name}")


FLASH_ATTN_FUNC = AttentionForm(
    _flash("flash_attn_func"),
    ("q", "k", "v", "dropout_p", "softmax_scale", "causal"),
    _FLASH_UNSUPPORTED,
    "BSND",
)
FLASH_ATTN_QKVPACKED_FUNC = AttentionForm(
    _flash("flash_attn_qkvpacked_func"),
    ("qkv", "dropout_p", "softmax_scale", "causal"),
    _FLASH_UNSUPPORTED,
    "BSND",
)
FLASH_ATTN_VARLEN_FUNC = AttentionForm(
    _flash("flash_attn_varlen_func"),
    (
        "q", "k", "v", "cu_seqlens_q", "cu_seqlens_k", "max_seqlen_q", "max_seqlen_k",
        "dropout_p", "softmax_scale", "causal",
    ),
    {**_FLASH_UNSUPPORTED, "block_table": "None"},
    "TND",
)  # fmt: skip
XFORMERS_ATTENTION = AttentionForm(
    ("xformers.ops.memory_efficient_attention", "xformers.ops.fmha.memory_efficient_attention"),
    ("query", "key", "value", "attn_bias", "p", "scale"),
    {"op": "None", "output_dtype": "None"},
    "BSND",  # xformers' BMHK: batch, sequence, heads, head dim
)
XFORMERS_CAUSAL_BIAS = (
    "xformers.ops.LowerTriangularMask",
    "xformers.ops.fmha.attn_bias.LowerTriangularMask",
)
ATTENTION_FORMS = (
    FLASH_ATTN_FUNC,
    FLASH_ATTN_QKVPACKED_FUNC,
    FLASH_ATTN_VARLEN_FUNC,
    XFORMERS_ATTENTION,
)
ATTENTION_BY_NAME = {name: form for form in ATTENTION_FORMS for name in form.qualified}
# What to do with the flash-attn names no rule ports (the FlashAttention modules, kvpacked forms).
FLASH_ATTN_ADVICE = (
    "call torch_npu.npu_fusion_attention (input_layout BSND/TND, head_num, scale, keep_prob = "
    "1 - dropout_p, causal: sparse_mode=3 with a 2048x2048 upper-triangle atten_mask, True = masked)"
)


@dataclass(frozen=True)
class FusedOptimizer:
    """A torch optimizer and the torch_npu fused one with the same update rule."""

    torch: str
    npu: str
    parameters: tuple[str, ...]  # the fused constructor's, in order (params first)
    required: tuple[str, ...] = ()  # parameters the fused one requires (torch's has a default)


FUSED_OPTIMIZERS_MODULE = "torch_npu.optim"  # not imported by ``import torch_npu``
_ADAM = ("params", "lr", "betas", "eps", "weight_decay", "amsgrad")
FUSED_OPTIMIZERS: tuple[FusedOptimizer, ...] = (
    FusedOptimizer("torch.optim.Adam", "torch_npu.optim.NpuFusedAdam", _ADAM),
    FusedOptimizer("torch.optim.AdamW", "torch_npu.optim.NpuFusedAdamW", _ADAM),
    FusedOptimizer("torch.optim.SGD", "torch_npu.optim.NpuFusedSGD",
                   ("params", "lr", "momentum", "dampening", "weight_decay", "nesterov"),
                   required=("lr",)),
    FusedOptimizer("torch.optim.RMSprop", "torch_npu.optim.NpuFusedRMSprop",
                   ("params", "lr", "alpha", "eps", "weight_decay", "momentum", "centered")),
    FusedOptimizer("torch.optim.Adadelta", "torch_npu.optim.NpuFusedAdadelta",
                   ("params", "lr", "rho", "eps", "weight_decay")),
)  # fmt: skip
FUSED_OPTIMIZER_BY_NAME = {optimizer.torch: optimizer for optimizer in FUSED_OPTIMIZERS}
