"""Backend flags, TorchScript and CUDA extensions: things that stay but need a human look."""

from __future__ import annotations

from ascendify.migrate._rule import Operation, Rule
from ascendify.migrate.rules._api import api_family
from ascendify.targets import Safety


class BackendFlag(Rule):
    """What it does: notes cuDNN and CUDA matmul flags (``torch.backends.cudnn.benchmark``,
    ``.deterministic``, ``.allow_tf32``, ``torch.backends.cuda.matmul.allow_tf32``) that NPU
    accepts but that do not act there.

    Why: a run tuned or made deterministic through these flags is not tuned or deterministic on
    NPU (use ``torch.use_deterministic_algorithms``; the matmul analogue is
    ``torch_npu.npu.matmul.allow_hf32``).

    Example: ``torch.backends.cudnn.benchmark = True`` is left and reported as ADVICE.

    Fix safety: report only.
    """

    code = "NPU901"
    name = "backend-flag"
    summary = "cuDNN/CUDA backend flag without effect on NPU (left in place)"
    safety = Safety.REPORT_ONLY
    operation = Operation.ADVICE
    triggers = (b"cudnn", b"allow_tf32")


class BackendUnsupported(Rule):
    """What it does: reports ``torch.backends.cuda`` switches that NPU does not support:
    scaled-dot-product-attention kernel selection (``sdp_kernel``, ``enable_flash_sdp``, ...) and
    ``preferred_linalg_library``.

    Why: the calls have no NPU meaning; fused attention on NPU is ``torch_npu.npu_fusion_attention``.

    Example: ``with torch.backends.cuda.sdp_kernel(enable_flash=True):`` is reported.

    Fix safety: report only.
    """

    code = "NPU902"
    name = "backend-unsupported"
    summary = "torch.backends.cuda switch not supported on NPU (left in place)"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    triggers = (b"cuda",)


class BackendApi(Rule):
    """What it does: rewrites ``torch.backends.cuda.cufft_plan_cache`` to
    ``torch_npu.npu.backends.fft_plan_cache``.

    Why: the FFT plan cache of the NPU lives in torch_npu.

    Example: ``torch.backends.cuda.cufft_plan_cache.clear()`` becomes
    ``torch_npu.npu.backends.fft_plan_cache.clear()``.

    Fix safety: safe.
    """

    code = "NPU903"
    name = "backend-api"
    summary = "torch.backends.cuda API -> torch_npu.npu.backends"
    safety = Safety.SAFE
    triggers = (b"cufft",)


class TorchScript(Rule):
    """What it does: notes ``torch.jit.script``.

    Why: TorchScript does not compile for NPU (torch_npu's runtime redirect turns it off); a
    scripted function that fails on NPU has to run eagerly.

    Example: ``@torch.jit.script`` is left and reported as ADVICE.

    Fix safety: report only.
    """

    code = "NPU904"
    name = "torchscript"
    summary = "torch.jit.script may not compile for NPU (left in place)"
    safety = Safety.REPORT_ONLY
    operation = Operation.ADVICE
    triggers = (b"jit.script",)


class CudaExtension(Rule):
    """What it does: reports CUDA extension builds: ``torch.utils.cpp_extension.CUDAExtension``,
    ``load`` and ``load_inline``.

    Why: CUDA kernels do not build for NPU; they must be ported (for example as Ascend C
    operators registered through torch_npu) or replaced by torch operators.

    Example: ``ext = load(name="fused", sources=["fused.cu"])`` is reported.

    Fix safety: report only.
    """

    code = "NPU905"
    name = "cuda-extension"
    summary = "CUDA extension build (left in place)"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    triggers = (b"cpp_extension",)


api_family(
    ("torch.backends.cudnn", "torch.backends.cuda.matmul"), {Safety.REPORT_ONLY: BackendFlag}
)
api_family(
    ("torch.backends.cuda",), {Safety.REPORT_ONLY: BackendUnsupported, Safety.SAFE: BackendApi}
)
api_family(("torch.jit",), {Safety.REPORT_ONLY: TorchScript})
api_family(("torch.utils.cpp_extension",), {Safety.REPORT_ONLY: CudaExtension})
