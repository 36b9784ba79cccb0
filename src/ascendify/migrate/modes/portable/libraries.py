"""``--target portable``: CUDA-only libraries ported to torch itself (flash-attn and xformers to
``scaled_dot_product_attention``, apex to torch's optimizers and modules), which runs on NPU, CUDA
and CPU alike."""

from __future__ import annotations

import ast

from ascendify.migrate._rule import Context, Operation
from ascendify.migrate.modes.portable.mode import PortableRule
from ascendify.migrate.rules._ports import PORTERS, Port, Porter
from ascendify.migrate.rules.apex import port_apex
from ascendify.migrate.rules.attention import sdpa_port
from ascendify.targets import Safety


class PortableAttention(PortableRule):
    """What it does: rewrites flash-attn's ``flash_attn_func`` and ``flash_attn_qkvpacked_func`` and
    xformers' ``memory_efficient_attention`` to ``torch.nn.functional.scaled_dot_product_attention``,
    transposing (batch, sequence, heads, dim) to torch's (batch, heads, sequence, dim) and back;
    flash-attn's causal mask (from the bottom-right corner) becomes
    ``torch.nn.attention.bias.causal_lower_right``, xformers' ``LowerTriangularMask()``
    ``is_causal=True``; ``enable_gqa=True`` keeps grouped-query attention. The import goes once every
    use is ported.

    Why: flash-attn and xformers run on NVIDIA GPUs only; torch's attention runs everywhere (on an
    NPU through torch_npu's kernels).

    Example: ``flash_attn_func(q, k, v, causal=True)`` becomes
    ``torch.nn.functional.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
    v.transpose(1, 2), attn_mask=torch.nn.attention.bias.causal_lower_right(q.shape[1],
    k.shape[1]), enable_gqa=True).transpose(1, 2)``.

    Fix safety: unsafe: another kernel rounds differently and dropout draws from torch's generator.
    ``flash_attn_varlen_func`` and calls with arguments torch lacks are PRT504.
    """

    code = "PRT501"
    name = "portable-attention"
    summary = "flash-attn/xformers attention -> torch scaled_dot_product_attention"
    safety = Safety.UNSAFE
    triggers = (b"flash_attn", b"memory_efficient_attention")


class PortableApexOptimizer(PortableRule):
    """What it does: replaces apex's ``FusedAdam`` (``torch.optim.AdamW``, or ``Adam`` with
    ``adam_w_mode=False``) and ``FusedSGD`` (``torch.optim.SGD``) with torch's optimizers, with
    apex's defaults where torch's differ (``weight_decay=0.0``).

    Why: apex's kernels run on NVIDIA GPUs only.

    Example: ``FusedAdam(params, lr=1e-3)`` becomes
    ``torch.optim.AdamW(params, lr=1e-3, weight_decay=0.0)``.

    Fix safety: unsafe: torch's update rounds differently from apex's fused kernel.
    """

    code = "PRT502"
    name = "portable-apex-optimizer"
    summary = "apex FusedAdam/FusedSGD -> torch.optim"
    safety = Safety.UNSAFE
    triggers = (b"apex",)


class PortableApexModule(PortableRule):
    """What it does: replaces ``apex.parallel.DistributedDataParallel``,
    ``apex.normalization.FusedLayerNorm`` and ``FusedRMSNorm`` with torch's classes, as NPU021.

    Why: apex runs on NVIDIA GPUs only; torch's classes compute the same everywhere.

    Example: ``FusedLayerNorm(16)`` becomes ``torch.nn.LayerNorm(16)``.

    Fix safety: safe.
    """

    code = "PRT503"
    name = "portable-apex-module"
    summary = "apex DDP / FusedLayerNorm / FusedRMSNorm -> torch"
    safety = Safety.SAFE
    triggers = (b"apex",)


class PortableLibraryUnported(PortableRule):
    """What it does: reports the flash-attn, xformers and apex calls PRT501-PRT503 cannot port,
    with what to write instead.

    Why: they run on NVIDIA GPUs only, and torch has no exact counterpart (packed variable-length
    attention, sliding windows, apex.amp's rewrite of several statements).

    Example: ``flash_attn_varlen_func(q, k, v, cu, cu, m, m)`` is reported.

    Fix safety: report only.
    """

    code = "PRT504"
    name = "portable-library-unported"
    summary = "CUDA-only library call left in place (what to write instead)"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    triggers = (b"flash_attn", b"memory_efficient_attention", b"apex")


def _attention(ctx: Context, node: ast.Call, qualified: str) -> Port | None:
    return Port(PortableAttention, sdpa_port(ctx, node, qualified))


def _apex(ctx: Context, node: ast.Call, qualified: str) -> Port | None:
    return port_apex(ctx, node, qualified, portable=True,
                     rules={True: PortableApexModule, False: PortableApexOptimizer})  # fmt: skip


_ADVICE = "use torch's own operators (scaled_dot_product_attention, torch.amp, torch.optim)"
PORTERS.append(
    Porter(PortableAttention, PortableLibraryUnported, ("flash_attn", "xformers"), _attention,
           _ADVICE)
)  # fmt: skip
PORTERS.append(
    Porter(PortableApexOptimizer, PortableLibraryUnported, ("apex",), _apex, _ADVICE,
           also=(PortableApexModule,))
)  # fmt: skip
