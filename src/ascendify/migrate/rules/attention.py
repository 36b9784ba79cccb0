"""Fused attention of CUDA-only libraries (flash-attn, xformers) -> ``torch_npu.npu_fusion_attention``.

A call is ported when every argument it passes has an exact counterpart (the table of
:mod:`ascendify.targets.libraries`); :mod:`ascendify.migrate.rules._ports` finds the calls and
deletes the library's imports once every use is ported.
"""

from __future__ import annotations

import ast
import re

from ascendify.migrate._rule import Context, Operation, Rule
from ascendify.migrate.rules._ports import PORTERS, Port, Porter, Unported
from ascendify.targets import Safety
from ascendify.targets.libraries import (
    ATTENTION_BY_NAME,
    CAUSAL_LOWER_RIGHT,
    COMPRESSED_MASK_SIZE,
    FLASH_ATTN_ADVICE,
    FLASH_ATTN_FUNC,
    FLASH_ATTN_QKVPACKED_FUNC,
    FLASH_ATTN_VARLEN_FUNC,
    FUSION_ATTENTION,
    SCALED_DOT_PRODUCT_ATTENTION,
    SPARSE_MODE_BOTTOM_RIGHT_CAUSAL,
    SPARSE_MODE_TOP_LEFT_CAUSAL,
    XFORMERS_ATTENTION,
    XFORMERS_CAUSAL_BIAS,
    AttentionForm,
)


class FusedAttention(Rule):
    """What it does: rewrites flash-attn's ``flash_attn_func``, ``flash_attn_qkvpacked_func`` and
    ``flash_attn_varlen_func`` and xformers' ``memory_efficient_attention`` to
    ``torch_npu.npu_fusion_attention(...)[0]``: layout ``BSND`` (``TND`` for the varlen form, with
    the cumulative sequence lengths as ``actual_seq_qlen``/``actual_seq_kvlen``), ``head_num`` from
    the query's shape, ``scale`` defaulting to 1/sqrt(head dim), ``keep_prob = 1 - dropout_p``, a
    causal mask as ``sparse_mode`` 3 (flash-attn: from the bottom-right corner) or 2 (xformers'
    ``LowerTriangularMask``: from the top-left) with torch_npu's 2048x2048 compressed mask. The
    library's import is deleted once every use of it is ported.

    Why: flash-attn and xformers cannot be installed on an NPU host; torch_npu's fused attention
    computes the same attention.

    Example: ``out = flash_attn_func(q, k, v, causal=True)`` becomes
    ``out = torch_npu.npu_fusion_attention(q, k, v, q.shape[2], "BSND", atten_mask=torch.ones(2048,
    2048, dtype=torch.bool, device=q.device).triu(1), scale=q.shape[-1] ** -0.5, sparse_mode=3)[0]``.

    Fix safety: unsafe: another kernel rounds differently, and dropout draws from the NPU's own
    generator. Calls with arguments that have no counterpart (sliding windows, ALiBi slopes,
    returned probabilities) are NPU011.
    """

    code = "NPU010"
    name = "fused-attention"
    summary = "flash-attn/xformers attention -> torch_npu.npu_fusion_attention"
    safety = Safety.UNSAFE
    triggers = (b"flash_attn", b"memory_efficient_attention")


class FusedAttentionUnported(Rule):
    """What it does: reports a flash-attn or xformers attention call that NPU010 cannot port, with
    the reason and what to write instead.

    Why: its arguments have no exact ``npu_fusion_attention`` counterpart (a sliding window, ALiBi
    slopes, softcap, returned probabilities, an attention bias other than the causal one), or they
    are passed in a way the rule cannot read (``*args``, ``**kwargs``).

    Example: ``flash_attn_func(q, k, v, window_size=(128, 0))`` is reported.

    Fix safety: report only.
    """

    code = "NPU011"
    name = "fused-attention-unported"
    summary = "flash-attn/xformers attention call left in place (no exact port)"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    triggers = FusedAttention.triggers


def _port_call(ctx: Context, node: ast.Call, qualified: str) -> Port | None:
    form = ATTENTION_BY_NAME.get(qualified)
    if form is None:
        raise Unported("no exact port")
    if not ctx.facts.has(FUSION_ATTENTION):
        raise Unported(f"torch_npu {ctx.facts.version} has no npu_fusion_attention")
    return Port(FusedAttention, _port(ctx, node, form))


PORTERS.append(
    Porter(FusedAttention, FusedAttentionUnported, ("flash_attn", "xformers"), _port_call,
           FLASH_ATTN_ADVICE)
)  # fmt: skip


def _arguments(node: ast.Call, form: AttentionForm) -> dict[str, ast.expr]:
    """The call's arguments by parameter name; Unported when one has no counterpart."""
    if any(isinstance(arg, ast.Starred) for arg in node.args):
        raise Unported("arguments passed with *")
    if len(node.args) > len(form.parameters):
        raise Unported(f"{form.must_default and next(iter(form.must_default))} is passed")
    bound = dict(zip(form.parameters, node.args, strict=False))
    for keyword in node.keywords:
        if keyword.arg is None:
            raise Unported("arguments passed with **")
        if keyword.arg in form.must_default:
            default = form.must_default[keyword.arg]
            if ast.dump(keyword.value) != ast.dump(ast.parse(default, mode="eval").body):
                raise Unported(f"{keyword.arg}= has no npu_fusion_attention counterpart")
        elif keyword.arg not in form.parameters:
            raise Unported(f"unknown argument {keyword.arg}=")
        else:
            bound[keyword.arg] = keyword.value
    return bound


def _simple(node: ast.expr) -> bool:
    """A name, attribute chain or constant: repeating it in the port changes nothing."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name | ast.Constant)


def _atom(ctx: Context, node: ast.expr) -> str:
    text = ctx.segment(node)
    return text if _simple(node) or isinstance(node, ast.Call | ast.Subscript) else f"({text})"


def _is_constant(node: ast.expr | None, value: object) -> bool:
    return node is None or (isinstance(node, ast.Constant) and node.value == value)


def _bound(node: ast.Call, form: AttentionForm) -> dict[str, ast.expr]:
    """The call's arguments by flash-attn's parameter names."""
    args = _arguments(node, form)
    if form is XFORMERS_ATTENTION:  # xformers' names for flash-attn's parameters
        renamed = {
            "query": "q",
            "key": "k",
            "value": "v",
            "p": "dropout_p",
            "scale": "softmax_scale",
        }
        args = {renamed.get(name, name): value for name, value in args.items()}
    return args


def _port(ctx: Context, node: ast.Call, form: AttentionForm) -> str:
    args = _bound(node, form)
    if form is FLASH_ATTN_QKVPACKED_FUNC:
        first, tensor = _read_once(ctx, _required(args, "qkv"), "qkv")
        head = f"{tensor}.shape[3]"
        inputs = f"*{first}.unbind(2)"
    else:
        first, tensor = _read_once(ctx, _required(args, "q"), "q")
        head = f"{tensor}.shape[{1 if form.layout == 'TND' else 2}]"
        inputs = ", ".join([first, *(_needed(ctx, args, name) for name in "kv")])
    options = [*_mask(ctx, form, args, tensor), f"scale={_scale(ctx, args, tensor)}"]
    dropout = args.get("dropout_p")
    if not _is_constant(dropout, 0) and not _is_constant(dropout, 0.0):
        assert dropout is not None
        options.append(f"keep_prob=1 - {_atom(ctx, dropout)}")
    if form is FLASH_ATTN_VARLEN_FUNC:
        for option, name in (
            ("actual_seq_qlen", "cu_seqlens_q"),
            ("actual_seq_kvlen", "cu_seqlens_k"),
        ):
            options.append(f"{option}={_atom(ctx, _required(args, name))}[1:].tolist()")
    options.extend(_sparse_mode(ctx, form, args))
    layout = f'"{form.layout}"'
    return f"{FUSION_ATTENTION}({inputs}, {head}, {layout}, {', '.join(options)})[0]"


def sdpa_port(ctx: Context, node: ast.Call, qualified: str) -> str:
    """The call as torch's ``scaled_dot_product_attention`` on (batch, heads, sequence, dim)
    tensors, transposed from and back to the libraries' (batch, sequence, heads, dim)."""
    form = ATTENTION_BY_NAME.get(qualified)
    if form is None:
        raise Unported("no exact port")
    if form is FLASH_ATTN_VARLEN_FUNC:
        raise Unported("torch has no attention over packed sequences of different lengths")
    args = _bound(node, form)
    causal = _causal(ctx, form, args)
    # flash-attn's causal mask reads the lengths of q and k: an expression (q.transpose(1, 2)) is
    # bound to a name where the port first reads it, so it is computed once.
    lengths = causal is not False and form is FLASH_ATTN_FUNC
    read: dict[str, str] = {}
    if form is FLASH_ATTN_QKVPACKED_FUNC:
        inputs = f"*{_atom(ctx, _required(args, 'qkv'))}.transpose(1, 3).unbind(2)"
    else:
        moved = []
        for name in "qkv":
            tensor = _required(args, name)
            if lengths and name in "qk":
                first, read[name] = _read_once(ctx, tensor, name)
            else:
                first = _atom(ctx, tensor)
            moved.append(f"{first}.transpose(1, 2)")
        inputs = ", ".join(moved)
    options = []
    if lengths:  # from the bottom-right corner
        mask = f"{CAUSAL_LOWER_RIGHT}({read['q']}.shape[1], {read['k']}.shape[1])"
        options.append(f"attn_mask={mask}" + ("" if causal is True else f" if {causal} else None"))
    elif causal is not False:  # as many queries as keys, or xformers' top-left triangle: torch's
        options.append(f"is_causal={True if causal is True else f'bool({causal})'}")
    for option, name in (("dropout_p", "dropout_p"), ("scale", "softmax_scale")):
        if args.get(name) is not None:
            options.append(f"{option}={ctx.segment(args[name])}")
    options.append("enable_gqa=True")
    return f"{SCALED_DOT_PRODUCT_ATTENTION}({inputs}, {', '.join(options)}).transpose(1, 2)"


def _required(args: dict[str, ast.expr], name: str) -> ast.expr:
    if args.get(name) is None:
        raise Unported(f"{name} is not passed")
    return args[name]


def _needed(ctx: Context, args: dict[str, ast.expr], name: str) -> str:
    return ctx.segment(_required(args, name))


def _read_once(ctx: Context, node: ast.expr, name: str) -> tuple[str, str]:
    """(its first reading, its later ones) for a tensor the port reads more than once: an
    expression (``q.transpose(1, 2)``) is bound to a name where it is first read, the port's
    first argument, so it is computed once, in the original's order."""
    text = ctx.segment(node)
    if _simple(node):
        return text, text
    local = f"attention_{name}"
    taken = ctx.source.text
    suffix = 0
    while re.search(rf"\b{local}{suffix or ''}\b", taken):
        suffix += 1
    local += str(suffix or "")
    return f"({local} := {text})", local


def _scale(ctx: Context, args: dict[str, ast.expr], tensor: str) -> str:
    default = f"{tensor}.shape[-1] ** -0.5"
    scale = args.get("softmax_scale")
    if _is_constant(scale, None):
        return default
    assert scale is not None
    text = ctx.segment(scale)
    if isinstance(scale, ast.Constant | ast.BinOp | ast.UnaryOp):
        return text
    if not _simple(scale):
        raise Unported(f"softmax scale {text} may be None: bind it to a name")
    return f"{text} if {text} is not None else {default}"


def _causal(ctx: Context, form: AttentionForm, args: dict[str, ast.expr]) -> str | bool:
    """True, False, or the source of a flag known only when the program runs."""
    if form is XFORMERS_ATTENTION:
        bias = args.get("attn_bias")
        if _is_constant(bias, None):
            return False
        assert bias is not None
        if (
            isinstance(bias, ast.Call)
            and not bias.args
            and not bias.keywords
            and ctx.names.qualified_name(bias.func) in XFORMERS_CAUSAL_BIAS
        ):
            return True
        raise Unported(f"attn_bias {ctx.segment(bias)} is not LowerTriangularMask()")
    flag = args.get("causal")
    if flag is None or isinstance(flag, ast.Constant):
        return bool(flag.value) if flag is not None else False
    if not _simple(flag):
        raise Unported(f"causal flag {ctx.segment(flag)} is read twice: bind it to a name")
    return ctx.segment(flag)


def _mask(ctx: Context, form: AttentionForm, args: dict[str, ast.expr], tensor: str) -> list[str]:
    causal = _causal(ctx, form, args)
    if causal is False:
        return []
    size = COMPRESSED_MASK_SIZE
    mask = f"torch.ones({size}, {size}, dtype=torch.bool, device={tensor}.device).triu(1)"
    return [f"atten_mask={mask}" if causal is True else f"atten_mask={mask} if {causal} else None"]


def _sparse_mode(ctx: Context, form: AttentionForm, args: dict[str, ast.expr]) -> list[str]:
    causal = _causal(ctx, form, args)
    mode = (
        SPARSE_MODE_TOP_LEFT_CAUSAL
        if form is XFORMERS_ATTENTION
        else SPARSE_MODE_BOTTOM_RIGHT_CAUSAL
    )
    if causal is False:
        return []
    return [f"sparse_mode={mode}" if causal is True else f"sparse_mode={mode} if {causal} else 0"]
