"""What a framework setting's value means on the NPU, wherever it is written (a Python keyword, a
shell flag, a YAML key): one judgement per (name, value, target), shared by every file kind."""

from __future__ import annotations

from dataclasses import dataclass

from ascendify.configs.rules import PORTABLE

# Optimizer names transformers builds from bitsandbytes (OptimizerNames in training_args.py).
BNB_OPTIMIZERS = frozenset(
    {
        "adamw_bnb_8bit", "adamw_8bit", "ademamix_8bit", "lion_8bit", "lion_32bit",
        "paged_adamw_32bit", "paged_adamw_8bit", "paged_ademamix_32bit", "paged_ademamix_8bit",
        "paged_lion_32bit", "paged_lion_8bit", "rmsprop_bnb", "rmsprop_bnb_8bit",
        "rmsprop_bnb_32bit", "galore_adamw_8bit", "galore_adamw_8bit_layerwise",
    }
)  # fmt: skip
_TRUE = frozenset({"true", "yes", "t", "y", "1"})  # transformers' string_to_bool
# The settings this module judges, by their names as argument parsers spell them.
NAMES = frozenset(
    {
        "ddp_backend", "optim", "tf32", "attn_implementation", "load_in_4bit", "load_in_8bit",
        "torch_compile_backend", "dynamo_backend", "mixed_precision",
    }
)  # fmt: skip
# Settings a ``--name`` given alone sets to true (boolean flags of HfArgumentParser).
BOOLEAN = frozenset({"tf32", "load_in_4bit", "load_in_8bit"})


@dataclass(frozen=True)
class Verdict:
    """What to do with one setting: rewrite its value (``new``), drop it (``drop``), or report it."""

    code: str
    message: str
    new: str | None = None
    drop: bool = False


def normalized(name: str) -> str:
    """``--ddp-backend`` and ``ddp_backend`` are one setting."""
    return name.lstrip("-").replace("-", "_")


def is_true(value: str) -> bool:
    return value.lower() in _TRUE


def judge(name: str, value: str, target: str) -> Verdict | None:
    """The verdict on ``name`` set to ``value`` (as text: ``"True"`` for a Python True) for a
    migration to ``target``; None when it needs nothing."""
    name = normalized(name)
    if name == "ddp_backend" and value == "nccl":
        if target == PORTABLE:
            return Verdict(
                "CFG102", "dropped: accelerate picks nccl, hccl or gloo for the host", drop=True
            )
        return Verdict("CFG101", "nccl -> hccl", new="hccl")
    if name == "optim" and value == "adamw_apex_fused":
        if target == PORTABLE:
            return Verdict("CFG104", "adamw_apex_fused -> adamw_torch", new="adamw_torch")
        return Verdict("CFG103", "adamw_apex_fused -> adamw_torch_npu_fused (torch_npu's NpuFusedAdamW)",
                       new="adamw_torch_npu_fused")  # fmt: skip
    if name == "optim" and value in BNB_OPTIMIZERS:
        return Verdict("CFG107", "bitsandbytes optimizer: use adamw_torch or adamw_torch_npu_fused")
    if name == "tf32" and is_true(value):
        if target == PORTABLE:
            return Verdict("CFG106", "raises ValueError without CUDA TF32: set it from the host")
        return Verdict(
            "CFG105",
            "dropped: transformers raises ValueError without CUDA TF32; the NPU's counterpart is "
            "torch_npu.npu.matmul.allow_hf32 = True, set in code",
            drop=True,
        )
    if name == "attn_implementation" and value == "flash_attention_2":
        return Verdict(
            "CFG108",
            "runs on the NPU through torch_npu.npu_fusion_attention with transformers >= 4.51; "
            'before, use "sdpa"',
        )
    if name in ("load_in_4bit", "load_in_8bit") and is_true(value):
        return Verdict(
            "CFG109",
            "bitsandbytes quantisation: NF4 is plain PyTorch on the NPU, int8 has no kernel",
        )
    if name in ("torch_compile_backend", "dynamo_backend") and value.lower() == "inductor":
        return Verdict(
            "CFG110", "inductor does not compile for the NPU: torchair's backend, or eager"
        )
    if name == "mixed_precision" and value == "fp8":
        return Verdict("CFG202", "FP8 needs CUDA kernels: use bf16")
    return None
