"""The framework-configuration rules (codes ``CFG``), as data: one table read by ``migrate`` (which
makes a migration rule of each) and by ``analyze`` (which lists their findings).

Each rule names the releases it holds for and its public source. The codes are grouped by where the
setting lives: ``CFG1xx`` transformers' ``TrainingArguments`` and model-loading arguments (in Python
calls, shell flags and argument YAML files), ``CFG2xx`` accelerate's config YAML, ``CFG3xx``
DeepSpeed's JSON config.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ascendify.targets import Safety

NPU = "npu"
PORTABLE = "portable"
EVERY_TARGET = frozenset({NPU, PORTABLE})


class Left(str, Enum):
    """What a report-only finding means on the NPU."""

    UNSUPPORTED = "UNSUPPORTED"  # fails there (or needs a package that cannot be installed)
    ADVICE = "ADVICE"  # runs, but differently, or only with some releases


@dataclass(frozen=True)
class ConfigRule:
    code: str  # stable, never reused
    name: str  # kebab-case
    summary: str  # one line
    safety: Safety
    targets: frozenset[str]  # the migration targets that apply it ("npu", "portable")
    what: str  # what it does (docs)
    why: str
    example: str
    holds_for: str  # the framework releases it holds for
    source: str  # public source of the facts it rests on
    left: Left | None = None  # for report-only rules

    @property
    def fix_safety(self) -> str:
        if self.safety is Safety.SAFE:
            return "safe."
        if self.safety is Safety.UNSAFE:
            return "unsafe: the training runs, but its numerics or speed may differ; check it."
        return "report only."

    @property
    def docstring(self) -> str:
        """The rule's documentation, in the sections every migration rule has."""
        return (
            f"What it does: {self.what}\n\nWhy: {self.why} Holds for {self.holds_for} "
            f"(source: {self.source}).\n\nExample: {self.example}\n\nFix safety: {self.fix_safety}\n"
        )


_HOLDS_HCCL = "transformers >= 4.34 (the first release whose --ddp_backend accepts hccl)"

RULES: tuple[ConfigRule, ...] = (
    ConfigRule(
        "CFG101",
        "ddp-backend-nccl",
        "transformers ddp_backend nccl -> hccl",
        Safety.SAFE,
        frozenset({NPU}),
        what="rewrites the ``nccl`` value of transformers' ``ddp_backend`` to ``hccl``: the keyword of "
        "a ``TrainingArguments(...)``/``Seq2SeqTrainingArguments(...)`` call (or of a "
        "subclass named after them), the ``--ddp_backend``/``--ddp-backend`` flag of a shell command line and "
        "the ``ddp_backend:`` key of an argument YAML file.",
        why="the Trainer hands the name to ``torch.distributed``, and an Ascend host has no NCCL; "
        "HCCL is its collective library.",
        example='``TrainingArguments(output_dir="out", ddp_backend="nccl")`` becomes '
        '``TrainingArguments(output_dir="out", ddp_backend="hccl")``; ``--ddp_backend nccl`` '
        "becomes ``--ddp_backend hccl``.",
        holds_for=_HOLDS_HCCL,
        source="huggingface/transformers src/transformers/training_args.py (ddp_backend choices); "
        "modelscope/ms-swift#1165",
    ),
    ConfigRule(
        "CFG102",
        "ddp-backend-runtime",
        "transformers ddp_backend nccl dropped: the backend is chosen at run time",
        Safety.SAFE,
        frozenset({PORTABLE}),
        what="under ``--target portable``, removes ``ddp_backend`` set to ``nccl`` (the keyword, the "
        "shell flag with its value, the YAML line).",
        why="without it the Trainer lets accelerate choose the backend from the host: nccl on CUDA, "
        "hccl on an NPU, gloo on the CPU, so one configuration serves every host.",
        example='``TrainingArguments(output_dir="out", ddp_backend="nccl")`` becomes '
        '``TrainingArguments(output_dir="out")``.',
        holds_for="transformers >= 4.34 with accelerate >= 0.34 (which checks for an NPU before "
        "CUDA)",
        source="huggingface/accelerate src/accelerate/state.py (PartialState backend choice, "
        "PR #3021)",
    ),
    ConfigRule(
        "CFG103",
        "apex-fused-optim",
        "transformers optim adamw_apex_fused -> adamw_torch_npu_fused",
        Safety.UNSAFE,
        frozenset({NPU}),
        what="rewrites the optimizer name ``adamw_apex_fused`` (``optim=`` keyword, ``--optim`` "
        "flag, ``optim:`` YAML key) to ``adamw_torch_npu_fused``, torch_npu's fused AdamW.",
        why="NVIDIA apex does not build for an NPU; the Trainer maps ``adamw_torch_npu_fused`` to "
        "``torch_npu.optim.NpuFusedAdamW``, the same AdamW update in one fused kernel.",
        example='``optim="adamw_apex_fused"`` becomes ``optim="adamw_torch_npu_fused"``.',
        holds_for="transformers >= 4.35 (adamw_torch_npu_fused added); transformers releases after "
        "5.0 no longer accept adamw_apex_fused at all",
        source="huggingface/transformers PR #26194; training_args.py OptimizerNames",
    ),
    ConfigRule(
        "CFG104",
        "apex-fused-optim-portable",
        "transformers optim adamw_apex_fused -> adamw_torch",
        Safety.UNSAFE,
        frozenset({PORTABLE}),
        what="under ``--target portable``, rewrites ``adamw_apex_fused`` to ``adamw_torch``.",
        why="apex exists on CUDA hosts only; torch's AdamW runs on every device.",
        example="``--optim adamw_apex_fused`` becomes ``--optim adamw_torch``.",
        holds_for="every transformers release that has adamw_apex_fused (removed after 5.0)",
        source="huggingface/transformers training_args.py OptimizerNames",
    ),
    ConfigRule(
        "CFG105",
        "tf32-dropped",
        "transformers tf32=True dropped (the NPU's HF32 switch is in torch_npu)",
        Safety.UNSAFE,
        frozenset({NPU}),
        what="removes ``tf32`` set to true (``tf32=True``, ``--tf32 True`` or a bare ``--tf32``, "
        "``tf32: true``); the change row says how to get the NPU's counterpart.",
        why="``TrainingArguments`` raises ``ValueError: --tf32 requires Ampere or a newer GPU arch`` "
        "wherever CUDA's TF32 is absent, an NPU host included. The NPU's counterpart is HF32, "
        "switched in code: ``torch_npu.npu.matmul.allow_hf32 = True`` (``--enable NPU908`` "
        "rewrites torch's TF32 switches to it).",
        example='``TrainingArguments(output_dir="out", tf32=True)`` becomes '
        '``TrainingArguments(output_dir="out")``.',
        holds_for="every transformers release with the tf32 argument, 5.24 included",
        source="huggingface/transformers training_args.py __post_init__ (is_torch_tf32_available)",
    ),
    ConfigRule(
        "CFG106",
        "tf32-portable",
        "transformers tf32=True fails without CUDA (left in place)",
        Safety.REPORT_ONLY,
        frozenset({PORTABLE}),
        what="under ``--target portable``, reports ``tf32`` set to true.",
        why="it raises ``ValueError`` on any host without CUDA's TF32, yet removing it changes the "
        "numerics of CUDA hosts; set it from the host (``tf32=torch.cuda.is_available()``) or drop it.",
        example='``TrainingArguments(output_dir="out", tf32=True)`` is reported.',
        holds_for="every transformers release with the tf32 argument",
        source="huggingface/transformers training_args.py __post_init__",
        left=Left.ADVICE,
    ),
    ConfigRule(
        "CFG107",
        "bitsandbytes-optim",
        "bitsandbytes optimizer (8-bit, paged) selected by name (left in place)",
        Safety.REPORT_ONLY,
        EVERY_TARGET,
        what="reports the optimizer names transformers builds from bitsandbytes "
        "(``adamw_bnb_8bit``, ``adamw_8bit``, ``paged_adamw_8bit``, ``paged_adamw_32bit``, "
        "``lion_8bit``, ``rmsprop_bnb`` ...).",
        why="bitsandbytes' Ascend backend implements NF4 in PyTorch only; its 8-bit and paged "
        "optimizers are CUDA kernels. Use ``adamw_torch`` (or ``adamw_torch_npu_fused``).",
        example="``--optim paged_adamw_8bit`` is reported.",
        holds_for="every transformers release; bitsandbytes releases up to its AscendC port",
        source="bitsandbytes-foundation/bitsandbytes PR #1422; hiyouga/LlamaFactory#3271",
        left=Left.UNSUPPORTED,
    ),
    ConfigRule(
        "CFG108",
        "flash-attention-2",
        "attn_implementation flash_attention_2 needs transformers' NPU path (left in place)",
        Safety.REPORT_ONLY,
        EVERY_TARGET,
        what="reports ``attn_implementation`` set to ``flash_attention_2`` (a keyword of any call, "
        "such as ``from_pretrained``, a shell flag, a YAML key).",
        why="the flash-attn package cannot be installed on Ascend. transformers 4.51 and later run "
        "``flash_attention_2`` through ``torch_npu.npu_fusion_attention`` (its causal mask is "
        "aligned bottom-right unless ``NPU_FA2_SPARSE_MODE=2``); some later releases lost that "
        "path (PR #39474, restored by PR #39844). On older releases use ``sdpa``.",
        example='``AutoModelForCausalLM.from_pretrained(name, attn_implementation="flash_attention_2")`` '
        "is reported.",
        holds_for="transformers < 4.51 (fails) and the releases between PR #39474 and PR #39844",
        source="huggingface/transformers#36618, PR #36696, PR #39844, PR #36383",
        left=Left.ADVICE,
    ),
    ConfigRule(
        "CFG109",
        "bitsandbytes-quantization",
        "bitsandbytes 4/8-bit model loading (left in place)",
        Safety.REPORT_ONLY,
        EVERY_TARGET,
        what="reports ``load_in_4bit``/``load_in_8bit`` set to true (a keyword, a shell flag, a "
        "YAML key) and ``BitsAndBytesConfig(...)``.",
        why="on Ascend, bitsandbytes' NF4 runs as plain PyTorch operators (slow; its AscendC kernels "
        "were still in progress) and LLM.int8 has no NPU kernel; users report failures in "
        "``bnb.matmul``. Train in bfloat16 or check the bitsandbytes release for its NPU backend.",
        example="``from_pretrained(name, load_in_4bit=True)`` is reported.",
        holds_for="bitsandbytes releases before its AscendC backend, with any transformers release",
        source="huggingface/transformers PR #31512; bitsandbytes PR #1422; "
        "hiyouga/LlamaFactory#6452",
        left=Left.UNSUPPORTED,
    ),
    ConfigRule(
        "CFG110",
        "inductor-compile",
        "torch.compile with the inductor backend (left in place)",
        Safety.REPORT_ONLY,
        EVERY_TARGET,
        what="reports the inductor backend where a configuration names it: "
        "``torch_compile_backend`` (keyword, flag, YAML key), accelerate's ``dynamo_backend: "
        "INDUCTOR`` (config YAML or ``--dynamo_backend``) and ``torch.compile(..., "
        'backend="inductor")``.',
        why="Inductor generates Triton/C++ kernels for CUDA and CPU; on an NPU, TorchAir's "
        "``torchair.get_npu_backend()`` is the compile backend (inference first), or run eagerly.",
        example="``--torch_compile_backend inductor`` is reported.",
        holds_for="torch_npu releases without the experimental Inductor AscendC codegen (it covers "
        "torch 2.9-2.12 only)",
        source="hiascend torchair_0003 (TorchAir); gitcode.com/Ascend/torchair "
        "experimental/_inductor_npu_ext/README.md",
        left=Left.UNSUPPORTED,
    ),
    ConfigRule(
        "CFG201",
        "accelerate-multi-gpu",
        "accelerate config distributed_type MULTI_GPU -> MULTI_NPU",
        Safety.SAFE,
        frozenset({NPU}),
        what="rewrites ``distributed_type: MULTI_GPU`` of an accelerate config file to "
        "``MULTI_NPU``. ``gpu_ids`` stays: accelerate itself turns it into "
        "``ASCEND_RT_VISIBLE_DEVICES`` on an NPU host.",
        why="``MULTI_NPU`` is the value ``accelerate config`` writes on an NPU host; ``accelerate "
        "launch`` starts one process per device for either, and each process picks hccl.",
        example="``distributed_type: MULTI_GPU`` becomes ``distributed_type: MULTI_NPU``.",
        holds_for="accelerate >= 0.21 (MULTI_NPU and the NPU gpu_ids mapping added)",
        source="huggingface/accelerate PR #1676; src/accelerate/commands/launch.py, "
        "src/accelerate/utils/launch.py",
    ),
    ConfigRule(
        "CFG202",
        "accelerate-fp8",
        "accelerate mixed_precision fp8 (left in place)",
        Safety.REPORT_ONLY,
        EVERY_TARGET,
        what="reports ``mixed_precision: fp8`` in an accelerate config file and ``--mixed_precision "
        "fp8`` on an ``accelerate launch`` line.",
        why="accelerate's FP8 goes through Transformer Engine, MS-AMP or torchao's CUDA kernels; "
        "use ``bf16`` on an NPU.",
        example="``mixed_precision: fp8`` is reported.",
        holds_for="accelerate >= 0.17 (fp8 option, PR #1086)",
        source="huggingface/accelerate src/accelerate/utils/dataclasses.py (FP8 recipes)",
        left=Left.UNSUPPORTED,
    ),
    ConfigRule(
        "CFG301",
        "deepspeed-op-without-npu-builder",
        "DeepSpeed feature whose op has no NPU builder (left in place)",
        Safety.REPORT_ONLY,
        EVERY_TARGET,
        what="reports the parts of a DeepSpeed JSON config that load an op DeepSpeed cannot build "
        "for an NPU: the ``Lamb`` optimizer (fused_lamb), ``Lion`` without CPU offload "
        "(fused_lion), ``sparse_attention`` (sparse_attn), ``random_ltd`` (random_ltd), ZeRO++ "
        "quantized weights or gradients (quantizer) and ``compile.deepcompile`` (dc).",
        why="DeepSpeed's NPU accelerator builds fused_adam, cpu_adam, cpu_adagrad, cpu_lion, "
        "async_io, pin_memory and inference only; any other op resolves to its "
        "NotImplementedBuilder and fails when loaded. Adam/AdamW, CPU offload and NVMe offload work.",
        example='``"optimizer": {"type": "Lamb", ...}`` is reported (use ``AdamW``).',
        holds_for="DeepSpeed >= 0.9.3 (NPU accelerator) up to the current 0.19 series",
        source="deepspeedai/DeepSpeed op_builder/npu/__init__.py, accelerator/npu_accelerator.py",
        left=Left.UNSUPPORTED,
    ),
    ConfigRule(
        "CFG302",
        "deepspeed-comm-backend",
        "DeepSpeed 1-bit optimizer comm_backend_name nccl -> hccl",
        Safety.SAFE,
        frozenset({NPU}),
        what='rewrites ``"comm_backend_name": "nccl"`` in the optimizer parameters of a DeepSpeed '
        'config (1-bit Adam, 0/1 Adam, 1-bit Lamb) to ``"hccl"``.',
        why="the 1-bit optimizers build their compressed all-reduce on the named backend; DeepSpeed "
        "has an HCCL one (``deepspeed.runtime.comm.hccl.HcclBackend``) for the NPU.",
        example='``"comm_backend_name": "nccl"`` becomes ``"comm_backend_name": "hccl"``.',
        holds_for="DeepSpeed >= 0.12.5 (HcclBackend, PR #4733)",
        source="deepspeedai/DeepSpeed deepspeed/runtime/fp16/onebit/adam.py",
    ),
    ConfigRule(
        "CFG303",
        "deepspeed-cuda-only-field",
        "DeepSpeed setting that needs CUDA (left in place)",
        Safety.REPORT_ONLY,
        EVERY_TARGET,
        what='reports ``"amp": {"enabled": true}`` (NVIDIA apex AMP) and a 1-bit optimizer '
        "without ``comm_backend_name`` (it defaults to nccl).",
        why='apex AMP does not build for an NPU (use the ``"bf16"`` or ``"fp16"`` section); a 1-bit '
        'optimizer needs ``"comm_backend_name": "hccl"`` there.',
        example='``"amp": {"enabled": true, "opt_level": "O1"}`` is reported.',
        holds_for="every DeepSpeed release with an NPU accelerator (0.9.3 and later)",
        source="deepspeedai/DeepSpeed deepspeed/runtime/engine.py (amp), "
        "deepspeed/runtime/fp16/onebit/adam.py",
        left=Left.UNSUPPORTED,
    ),
)
