"""Backend flags, TorchScript and CUDA extensions: things that stay but need a human look."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from ascendify.migrate._modes import EVERY_TARGET
from ascendify.migrate._rule import Context, Finding, Operation, Rule, checks
from ascendify.migrate.rules._api import api_family
from ascendify.targets import Safety
from ascendify.targets.apis import HF32_FLAGS


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
    targets = EVERY_TARGET  # portable code keeps the flag too: it acts on CUDA hosts only
    triggers = (b"cudnn", b"allow_tf32")


class AllowHf32(Rule):
    """What it does: on request (``--enable NPU908``), rewrites the TF32 switches to their NPU
    counterparts: ``torch.backends.cuda.matmul.allow_tf32`` becomes
    ``torch_npu.npu.matmul.allow_hf32`` and ``torch.backends.cudnn.allow_tf32`` becomes
    ``torch_npu.npu.conv.allow_hf32``. Without ``--enable NPU908`` the switches are only reported
    (NPU901).

    Why: both trade float32 precision for speed, but HF32 rounds differently from TF32, so
    results change; the user decides.

    Example: ``torch.backends.cuda.matmul.allow_tf32 = True`` becomes
    ``torch_npu.npu.matmul.allow_hf32 = True``.

    Fix safety: unsafe (numerics change); opt-in.
    """

    code = "NPU908"
    name = "allow-hf32"
    summary = "TF32 switch -> torch_npu HF32 switch (opt-in: --enable NPU908)"
    safety = Safety.UNSAFE
    opt_in = True
    triggers = (b"allow_tf32",)


@checks(ast.Attribute, rules=(AllowHf32,))
def check_allow_tf32(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Attribute)
    if node.attr != "allow_tf32":
        return
    qualified = ctx.names.qualified_name(node)
    npu = HF32_FLAGS.get(qualified or "")
    if npu is not None and ctx.facts.has(npu):
        yield AllowHf32.finding(node, f"{qualified} -> {npu} (HF32)", ctx.replace(node, npu))


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


class ExtensionBuildScript(Rule):
    """What it does: leaves a build script that compiles torch extensions (a ``setup.py`` calling
    ``setup(...)`` with ``torch.utils.cpp_extension``'s ``BuildExtension``/``CUDAExtension``)
    exactly as written, and reports it.

    Why: the script runs in pip's isolated build environment, where ``import torch_npu`` fails;
    its "build CUDA kernels?" conditions are about the build machine's CUDA toolkit, not about
    the device the program trains on.

    Example: ``if torch.cuda.is_available(): ext = CUDAExtension(...)`` in ``setup.py`` is left
    and reported; the CUDA kernels are reported by NPU905.

    Fix safety: report only.
    """

    code = "NPU906"
    name = "extension-build-script"
    summary = "torch extension build script (left as written)"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    targets = EVERY_TARGET
    keeps_lines = True
    triggers = (b"cpp_extension",)


class NvidiaSmi(Rule):
    """What it does: reports commands that run ``nvidia-smi`` (``subprocess.run(["nvidia-smi",
    ...])``, ``os.popen("nvidia-smi ...")``, ...).

    Why: an Ascend host has no ``nvidia-smi``; ``npu-smi info`` shows the NPUs (its options and
    output differ, so the call and its parsing need a human look), and
    ``torch_npu.npu.mem_get_info``/``utilization`` answer from Python.

    Example: ``subprocess.check_output(["nvidia-smi", "-L"])`` is reported.

    Fix safety: report only.
    """

    code = "NPU907"
    name = "nvidia-smi"
    summary = "nvidia-smi command (left in place; use npu-smi)"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    targets = EVERY_TARGET
    triggers = (b"nvidia-smi",)


@checks(ast.Call, rules=(NvidiaSmi,))
def check_nvidia_smi(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    commands = [*node.args, *(keyword.value for keyword in node.keywords)]
    for command in commands:
        words = command.elts if isinstance(command, ast.List | ast.Tuple) else [command]
        first = words[0] if words else None
        if (
            isinstance(first, ast.Constant)
            and isinstance(first.value, str)
            and first.value.split(" ", 1)[0] == "nvidia-smi"
        ):
            yield NvidiaSmi.finding(
                node, "nvidia-smi does not exist on NPU hosts: use npu-smi info"
            )
            return


class AcceleratorName(Rule):
    """What it does: reports an accelerator *name* ``"cuda"`` or ``"gpu"`` given to or held by
    something named like an accelerator: ``L.Trainer(accelerator="gpu")``,
    ``Fabric(accelerator="cuda")``, ``accelerator = "cuda"``, ``if accelerator == "cuda":``,
    ``def main(accelerator="cuda")``.

    Why: frameworks such as Lightning take these names to pick their own accelerator class, and
    have no built-in ``"npu"`` one; renaming the string would fail there. The project must register
    an NPU accelerator of its own or select the device another way, which needs a human look.

    Example: ``trainer = L.Trainer(accelerator="gpu", devices=8)`` is reported.

    Fix safety: report only.
    """

    code = "NPU909"
    name = "accelerator-name"
    summary = "framework accelerator name cuda/gpu (left in place)"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    targets = EVERY_TARGET
    triggers = (b"accelerator",)


_ACCELERATOR_HOLDER = re.compile(r"(?:^|_)accelerators?$", re.IGNORECASE)
_ACCELERATOR_NAMES = frozenset({"cuda", "gpu"})


def _holds_accelerator(node: ast.expr | None) -> bool:
    if isinstance(node, ast.Attribute):
        return bool(_ACCELERATOR_HOLDER.search(node.attr))
    return isinstance(node, ast.Name) and bool(_ACCELERATOR_HOLDER.search(node.id))


def _accelerator_names(value: ast.expr | None) -> list[str]:
    """The names ``"cuda"``/``"gpu"`` in a value, through containers and conditionals."""
    if value is None:
        return []
    found: list[str] = []
    for node in ast.walk(value):
        if isinstance(node, ast.Call | ast.Lambda):
            return found  # what a call does with its arguments is another matter
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value in _ACCELERATOR_NAMES
        ):
            found.append(node.value)
    return found


def _accelerator_values(node: ast.AST) -> list[ast.expr]:
    """The values that ``node`` gives to an accelerator holder."""
    if isinstance(node, ast.keyword):
        return [node.value] if node.arg and _ACCELERATOR_HOLDER.search(node.arg) else []
    if isinstance(node, ast.Assign):
        return [node.value] if any(_holds_accelerator(t) for t in node.targets) else []
    if isinstance(node, ast.AnnAssign):
        return [node.value] if node.value and _holds_accelerator(node.target) else []
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        return operands if any(_holds_accelerator(o) for o in operands) else []
    if isinstance(node, ast.arguments):
        positional = [*node.posonlyargs, *node.args]
        pairs = [
            *zip(positional[len(positional) - len(node.defaults) :], node.defaults, strict=True),
            *zip(node.kwonlyargs, node.kw_defaults, strict=True),
        ]
        defaults = [d for a, d in pairs if d is not None and _ACCELERATOR_HOLDER.search(a.arg)]
        annotations = [  # accelerator: Literal["cpu", "cuda"]
            a.annotation
            for a in [*positional, *node.kwonlyargs]
            if a.annotation is not None and _ACCELERATOR_HOLDER.search(a.arg)
        ]
        return [*defaults, *annotations]
    return []


@checks(
    ast.keyword, ast.Assign, ast.AnnAssign, ast.Compare, ast.arguments, rules=(AcceleratorName,)
)
def check_accelerator_name(
    ctx: Context, node: ast.AST, parent: ast.AST | None
) -> Iterator[Finding]:
    for value in _accelerator_values(node):
        names = _accelerator_names(value)
        if names:
            yield AcceleratorName.finding(
                value,
                f"accelerator name {names[0]!r} left in place: frameworks such as Lightning have "
                "no built-in 'npu' accelerator; register one or select the NPU another way",
            )


_SETUP_CALLS = frozenset({"setuptools.setup", "distutils.core.setup"})
_EXTENSION_BUILDERS = frozenset(
    f"torch.utils.cpp_extension.{name}" for name in ("BuildExtension", "CUDAExtension")
)


@checks(ast.Module, rules=(ExtensionBuildScript,))
def check_build_script(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Module)
    qualified = {binding.qualified for binding in ctx.names.bindings.values()}
    if not qualified & _EXTENSION_BUILDERS:
        return
    builds = any(
        isinstance(call, ast.Call) and ctx.names.qualified_name(call.func) in _SETUP_CALLS
        for call in ast.walk(node)
    )
    if builds:
        last = len(ctx.source.text.splitlines()) or 1
        yield Finding(
            ExtensionBuildScript, 1, last, "extension build script: left as written (no torch_npu)"
        )


api_family(
    ("torch.backends.cudnn", "torch.backends.cuda.matmul"), {Safety.REPORT_ONLY: BackendFlag}
)
api_family(
    ("torch.backends.cuda",), {Safety.REPORT_ONLY: BackendUnsupported, Safety.SAFE: BackendApi}
)
api_family(("torch.jit",), {Safety.REPORT_ONLY: TorchScript})
api_family(("torch.utils.cpp_extension",), {Safety.REPORT_ONLY: CudaExtension})
