"""torch_npu.npu_fusion_attention on the CPU, argument by argument as torch_npu documents it
(``_op_plugin_docs.py`` of the wheel): attention = Dropout(Softmax(Mask(scale * query @ key^T,
atten_mask)), keep_prob) @ value, with atten_mask True = masked. What the docs describe and the
stand-in does not compute (pse, prefix and band sparse modes, sink) fails loudly."""

from __future__ import annotations

from typing import Any

import torch

from _npu_standin.strict import not_emulated

NAME = "torch_npu.npu_fusion_attention"
LAYOUTS = ("BSH", "SBH", "BSND", "BNSD", "TND")
MAX_TOKENS = 2147483647  # pre_tockens/next_tockens: no band
COMPRESSED_MASK = 2048  # sparse_mode 2/3 read the mask as this upper triangle


def npu_fusion_attention(  # noqa: PLR0917 (the operator's schema)
    query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, head_num: int, input_layout: str,
    pse: Any = None, padding_mask: Any = None, atten_mask: torch.Tensor | None = None,
    scale: float = 1.0, keep_prob: float = 1.0, pre_tockens: int = MAX_TOKENS,
    next_tockens: int = MAX_TOKENS, inner_precise: int = 0, prefix: Any = None,
    actual_seq_qlen: Any = None, actual_seq_kvlen: Any = None, sparse_mode: int = 0,
    gen_mask_parallel: bool = True, sync: bool = False, softmax_layout: str = "",
    sink: Any = None, dropout_mask: Any = None, seed: int = 0, offset: int = 0,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int, int, int]:  # fmt: skip
    for given, what in ((pse, "pse"), (padding_mask, "padding_mask"), (prefix, "prefix"),
                        (sink, "sink"), (dropout_mask, "dropout_mask")):  # fmt: skip
        if given is not None:
            not_emulated(f"{NAME}({what}=...)")
    if sparse_mode not in (0, 1, 2, 3):
        not_emulated(f"{NAME}(sparse_mode={sparse_mode})")
    if (
        atten_mask is not None
        and sparse_mode == 0
        and (pre_tockens, next_tockens)
        != (
            MAX_TOKENS,
            MAX_TOKENS,
        )
    ):
        not_emulated(f"{NAME}(pre_tockens/next_tockens band)")
    if input_layout not in LAYOUTS:
        raise ValueError(f"{NAME}: input_layout {input_layout!r} is not one of {LAYOUTS}")
    if not 0 < keep_prob <= 1:
        raise ValueError(f"{NAME}: keep_prob must lie in (0, 1], got {keep_prob}")
    if query.dtype != key.dtype or key.dtype != value.dtype:
        raise TypeError(f"{NAME}: query, key and value must have one dtype")
    if key.shape != value.shape:
        raise ValueError(f"{NAME}: key and value must have one shape")
    if atten_mask is not None:
        if atten_mask.dtype not in (torch.bool, torch.uint8):
            raise TypeError(f"{NAME}: atten_mask must be bool or uint8, not {atten_mask.dtype}")
        atten_mask = atten_mask.bool()
        if sparse_mode in (2, 3):
            _check_compressed(atten_mask)
    causal = {2: "top-left", 3: "bottom-right"}.get(sparse_mode) if atten_mask is not None else None
    options = {"scale": scale, "keep_prob": keep_prob, "causal": causal}
    if input_layout == "TND":
        if actual_seq_qlen is None or actual_seq_kvlen is None:
            raise ValueError(f"{NAME}: TND needs actual_seq_qlen and actual_seq_kvlen")
        if atten_mask is not None and causal is None:
            not_emulated(f"{NAME}(input_layout='TND', sparse_mode={sparse_mode})")
        lengths = (actual_seq_qlen, actual_seq_kvlen)
        out = _varlen(query, key, value, head_num=head_num, lengths=lengths, options=options)
    else:
        head_dim = query.shape[-1] // head_num  # for BSH/SBH: H is N * D, D the query's
        q, k, v = (_to_bnsd(t, input_layout, head_dim) for t in (query, key, value))
        mask = atten_mask if causal is None else None
        out = _attention(q, k, v, head_num=head_num, mask=mask, options=options)
        out = _from_bnsd(out, input_layout, query.shape)
    empty = torch.empty(0, dtype=torch.float32)
    return out, empty, empty, empty, seed, offset, 0


def _check_compressed(mask: torch.Tensor) -> None:
    expected = torch.ones(COMPRESSED_MASK, COMPRESSED_MASK, dtype=torch.bool).triu(1)
    if tuple(mask.shape) != (COMPRESSED_MASK,) * 2 or not torch.equal(mask.cpu(), expected):
        raise ValueError(
            f"{NAME}: sparse_mode 2 and 3 take the compressed {COMPRESSED_MASK}x{COMPRESSED_MASK} "
            "upper triangle as atten_mask (torch_npu computes wrong results with another)"
        )


def _to_bnsd(t: torch.Tensor, layout: str, head_dim: int) -> torch.Tensor:
    if layout == "BNSD":
        return t
    if layout == "BSND":
        return t.transpose(1, 2)
    if layout == "SBH":
        t = t.transpose(0, 1)
    batch, seq, _ = t.shape
    return t.reshape(batch, seq, -1, head_dim).transpose(1, 2)


def _from_bnsd(out: torch.Tensor, layout: str, shape: torch.Size) -> torch.Tensor:
    if layout == "BNSD":
        return out
    out = out.transpose(1, 2)
    if layout == "BSND":
        return out
    if layout == "SBH":
        return out.reshape(shape[1], shape[0], shape[2]).transpose(0, 1)
    return out.reshape(shape)


def _attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, head_num: int,
               mask: torch.Tensor | None, options: dict[str, Any]) -> torch.Tensor:  # fmt: skip
    if q.shape[1] != head_num:
        raise ValueError(f"{NAME}: head_num {head_num} but the query has {q.shape[1]} heads")
    if k.shape[1] == 0 or q.shape[1] % k.shape[1]:
        raise ValueError(f"{NAME}: query heads {q.shape[1]} not a multiple of key heads")
    groups = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
    scores = torch.matmul(q.float(), k.float().transpose(-2, -1)) * options["scale"]
    seq_q, seq_kv = scores.shape[-2:]
    if options["causal"] is not None:
        shift = seq_kv - seq_q if options["causal"] == "bottom-right" else 0
        mask = torch.ones(seq_q, seq_kv, dtype=torch.bool, device=q.device).triu(1 + shift)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    if options["keep_prob"] < 1:
        probs = torch.nn.functional.dropout(probs, p=1 - options["keep_prob"])
    return torch.matmul(probs, v.float()).to(q.dtype)


def _varlen(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, head_num: int,
            lengths: tuple[Any, Any], options: dict[str, Any]) -> torch.Tensor:  # fmt: skip
    """TND: each sequence of the packed batch attends to its own keys (causal per sequence)."""
    ends_q, ends_kv = ([int(n) for n in cumulative] for cumulative in lengths)
    if len(ends_q) != len(ends_kv):
        raise ValueError(f"{NAME}: actual_seq_qlen and actual_seq_kvlen differ in length")
    pieces = []
    start_q = start_kv = 0
    for end_q, end_kv in zip(ends_q, ends_kv, strict=True):
        one = [t.unsqueeze(0).transpose(1, 2) for t in (q[start_q:end_q], k[start_kv:end_kv],
                                                         v[start_kv:end_kv])]  # fmt: skip
        out = _attention(*one, head_num=head_num, mask=None, options=options)
        pieces.append(out.transpose(1, 2).squeeze(0))
        start_q, start_kv = end_q, end_kv
    if start_q != q.shape[0]:
        raise ValueError(f"{NAME}: actual_seq_qlen ends at {start_q}, the query has {q.shape[0]}")
    return torch.cat(pieces)
