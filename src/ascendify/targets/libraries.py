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
# Modules a port names that ``import torch`` does not import.
SUBMODULES_TO_IMPORT = ("torch.nn.attention.bias",)

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


@dataclass(frozen=True)
class ApexPort:
    """An apex class with an exact counterpart (apex 0.1's constructors)."""

    apex: str
    npu: str  # for --target npu
    portable: str  # for --target portable
    positional: tuple[str, ...]  # apex's leading parameters, which the counterpart takes in order
    keeps: tuple[str, ...] = ()  # keywords passed on as they are
    drops: tuple[str, ...] = ()  # keywords that change no result (memory, speed): left out
    must_default: tuple[tuple[str, str], ...] = ()  # parameters the counterpart lacks, at default
    adds: tuple[tuple[str, str], ...] = ()  # defaults apex has and the counterpart does not
    exact: bool = False  # the same computation (else the update rule's rounding may differ)
    # Only when apex's keyword ``when[0]`` has the value ``when[1]`` (its default if left out).
    when: tuple[str, str, str] | None = None  # (keyword, value, apex's default)


_ADAM_DEFAULTS = (("bias_correction", "True"), ("capturable", "False"), ("master_weights", "False"))
APEX_PORTS: tuple[ApexPort, ...] = (
    ApexPort("apex.optimizers.FusedAdam", "torch_npu.optim.NpuFusedAdamW", "torch.optim.AdamW",
             ("params", "lr"), keeps=("betas", "eps", "weight_decay", "amsgrad"),
             drops=("set_grad_none", "adam_w_mode"), must_default=_ADAM_DEFAULTS,
             adds=(("weight_decay", "0.0"),), when=("adam_w_mode", "True", "True")),
    ApexPort("apex.optimizers.FusedAdam", "torch_npu.optim.NpuFusedAdam", "torch.optim.Adam",
             ("params", "lr"), keeps=("betas", "eps", "weight_decay", "amsgrad"),
             drops=("set_grad_none", "adam_w_mode"), must_default=_ADAM_DEFAULTS,
             when=("adam_w_mode", "False", "True")),
    ApexPort("apex.optimizers.FusedSGD", "torch_npu.optim.NpuFusedSGD", "torch.optim.SGD",
             ("params", "lr", "momentum", "dampening", "weight_decay", "nesterov"),
             drops=("set_grad_none", "materialize_master_grads"),
             must_default=(("wd_after_momentum", "False"),)),
    ApexPort("apex.parallel.DistributedDataParallel", "torch.nn.parallel.DistributedDataParallel",
             "torch.nn.parallel.DistributedDataParallel", ("module",),
             drops=("message_size", "delay_allreduce", "num_allreduce_streams"),
             must_default=(("shared_param", "None"), ("allreduce_trigger_params", "None"),
                           ("retain_allreduce_buffers", "False"), ("allreduce_always_fp32", "False"),
                           ("allreduce_communicators", "None"), ("gradient_average", "True"),
                           ("gradient_predivide_factor", "1.0"),
                           ("gradient_average_split_factor", "None"), ("prof", "False")),
             exact=True),
    ApexPort("apex.normalization.FusedLayerNorm", "torch.nn.LayerNorm", "torch.nn.LayerNorm",
             ("normalized_shape", "eps", "elementwise_affine"), exact=True),
    ApexPort("apex.normalization.FusedRMSNorm", "torch.nn.RMSNorm", "torch.nn.RMSNorm",
             ("normalized_shape", "eps", "elementwise_affine"), adds=(("eps", "1e-5"),),
             exact=True),
)  # fmt: skip
# What to write instead of the apex APIs no rule ports.
APEX_ADVICE: dict[str, str] = {
    "apex.amp.initialize": "use torch.autocast(device_type, dtype=torch.float16) around the "
    "forward pass and torch.amp.GradScaler (or keep apex.amp with Ascend's apex build)",
    "apex.amp.scale_loss": "with torch.amp.GradScaler: scaler.scale(loss).backward(), "
    "scaler.step(optimizer), scaler.update()",
    "apex.optimizers.FusedLAMB": "use torch_npu.optim.NpuFusedLamb (check its adam, "
    "use_global_grad_norm and weight decay against apex's max_grad_norm and adam_w_mode)",
}
APEX_DEFAULT_ADVICE = "no torch or torch_npu counterpart: port it by hand"
