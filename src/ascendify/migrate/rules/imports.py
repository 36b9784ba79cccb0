"""Imports: ``import torch_npu`` where the file needs it, and CUDA-only libraries."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator

from ascendify.migrate._imports import Import, Insertion
from ascendify.migrate._rule import Context, Edit, Finding, Operation, Rule, checks, finishes
from ascendify.source import LocalScope, import_bindings
from ascendify.targets import Safety
from ascendify.targets.devices import CUDA_ONLY_LIBRARIES, cuda_only_library


class ImportTorchNpu(Rule):
    """What it does: inserts ``import torch_npu`` once in every file that the migration changed
    or that uses ``torch.npu`` already, right after the file's first top-level ``torch`` import (or, without one, after the module
    docstring and ``from __future__`` imports). A file that already imports ``torch_npu`` is left
    alone. The line's comment is the hint a traceback shows where torch_npu is not installed.

    Why: the ``npu`` device type and the ``torch.npu`` namespace exist only once torch_npu is
    imported, and rewritten code names ``torch_npu.npu.*``.

    Example::

        import torch
        x = torch.zeros(2).cuda()

    becomes::

        import torch
        import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto
        x = torch.zeros(2).npu()

    Fix safety: safe.
    """

    code = "NPU001"
    name = "import-torch-npu"
    summary = "insert import torch_npu"
    safety = Safety.SAFE
    operation = Operation.INSERT
    triggers = (b"torch.npu",)  # a file that uses torch.npu already needs the import too


class FunctionTorchNpu(Rule):
    """What it does: inserts ``import torch_npu`` at the start of a function that imports torch_npu
    itself somewhere in its body (an Ascend branch of the project's own) when the migration wrote
    ``torch_npu`` elsewhere in that function.

    Why: an import inside a function makes ``torch_npu`` a local name of the whole function; a
    rewritten ``torch_npu.npu.*`` call in another branch would raise UnboundLocalError although the
    module imports torch_npu.

    Example::

        def pick(use_npu):
            if use_npu:
                import torch_npu
                return "npu"
            torch.cuda.set_device(0)

    becomes::

        def pick(use_npu):
            import torch_npu  # ...
            if use_npu:
                import torch_npu
                return "npu"
            torch_npu.npu.set_device(0)

    Fix safety: safe.
    """

    code = "NPU004"
    name = "function-torch-npu"
    summary = "import torch_npu in a function whose own import makes the name local"
    safety = Safety.SAFE
    operation = Operation.INSERT


class UnusedAmpC(Rule):
    """What it does: deletes ``import amp_C`` when the file never uses the name.

    Why: ``amp_C`` holds apex's CUDA kernels; it does not exist on an NPU host, so the import alone
    stops the script.

    Example: a line ``import amp_C`` (and nothing else using ``amp_C``) is removed.

    Fix safety: safe (the name is unused). A file that does use ``amp_C`` gets NPU003 instead.
    """

    code = "NPU002"
    name = "unused-amp-c"
    summary = "delete unused import amp_C"
    safety = Safety.SAFE
    operation = Operation.DELETE
    triggers = (b"amp_C",)


class CudaOnlyLibrary(Rule):
    """What it does: reports imports of libraries that run only on NVIDIA GPUs (flash_attn,
    xformers, apex, triton, bitsandbytes, cupy, pynvml, ...), with the NPU alternative.

    Why: these imports fail on an NPU host, or load CUDA kernels that cannot run there.

    Example: ``from flash_attn import flash_attn_func`` is reported: use
    ``torch_npu.npu_fusion_attention`` or ``torch.nn.functional.scaled_dot_product_attention``.

    Fix safety: report only.
    """

    code = "NPU003"
    name = "cuda-only-library"
    summary = "import of a CUDA-only library (left in place)"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    triggers = tuple(library.module.encode() for library in CUDA_ONLY_LIBRARIES)


# Tests of whether a rule that ports a library's uses deletes this import of it (not reported then).
REMOVED_BY_PORT: list[Callable[[Context, ast.Import | ast.ImportFrom], bool]] = []


@checks(ast.Import, ast.ImportFrom, rules=(UnusedAmpC, CudaOnlyLibrary))
def check_cuda_only_import(
    ctx: Context, node: ast.AST, parent: ast.AST | None
) -> Iterator[Finding]:
    assert isinstance(node, ast.Import | ast.ImportFrom)
    if _is_unused_amp_c(ctx, node):
        yield UnusedAmpC.finding(node, "import amp_C removed (unused)", delete_lines(ctx, node))
        return
    if any(removed(ctx, node) for removed in REMOVED_BY_PORT):
        return
    names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        names = [node.module, *(qualified for _, qualified, _ in import_bindings(node))]
    for name in names:
        library = cuda_only_library(name)
        if library is not None:
            yield CudaOnlyLibrary.finding(node, f"{name} does not run on NPU: {library.advice}")
            return


def _is_unused_amp_c(ctx: Context, node: ast.Import | ast.ImportFrom) -> bool:
    if not (
        isinstance(node, ast.Import)
        and [(alias.name, alias.asname) for alias in node.names] == [("amp_C", None)]
    ):
        return False
    if len(re.findall(r"\bamp_C\b", ctx.source.text)) != 1:
        return False
    return delete_lines(ctx, node) is not None


def delete_lines(ctx: Context, node: ast.stmt) -> Edit | None:
    """An edit removing the lines of a statement that is alone on them (else None)."""
    start, end = ctx.span(node)
    first = ctx.source.line(node.lineno)
    line_start = (
        start - node.col_offset
        if first[: node.col_offset].isspace() or node.col_offset == 0
        else -1
    )
    last = ctx.source.line(node.end_lineno or node.lineno)
    line_end = ctx.source.offset(node.end_lineno or node.lineno, 0) + len(last)
    rest = ctx.source.text[end:line_end]
    if line_start < 0 or rest.strip() not in ("", ";"):
        return None
    return Edit(line_start, line_end, "")


# ``torch(?<!\wtorch)`` is ``\btorch``, but led by a literal, which re scans for much faster.
_TORCH_NPU_NAMESPACE = re.compile(r"torch(?<!\wtorch)\.npu\b")
# The module's name in rewritten code; not inside another name ("adamw_torch_npu_fused").
_TORCH_NPU_NAME = re.compile(r"(?<!\w)torch_npu\b")


@finishes(rules=(ImportTorchNpu,))
def insert_torch_npu(
    ctx: Context, module: ast.Module, findings: list[Finding]
) -> Iterator[Insertion]:
    edits = [finding.edit for finding in findings if finding.edit is not None]
    uses_torch = any(
        binding.qualified.partition(".")[0] == "torch" for binding in ctx.names.bindings.values()
    )
    # torch.npu exists only once torch_npu is imported, whether the migration wrote it or not.
    uses_torch_npu_namespace = uses_torch and _TORCH_NPU_NAMESPACE.search(ctx.source.text)
    if not (edits or uses_torch_npu_namespace):
        return
    names_torch_npu = any(_TORCH_NPU_NAME.search(edit.replacement) for edit in edits)
    if names_torch_npu or uses_torch:  # a launcher that only sets environment variables needs none
        yield Insertion(
            ImportTorchNpu,
            (Import("torch_npu"),),
            message="import torch_npu",
            follows="torch",
            precedes="torch.npu",
        )


@finishes(rules=(FunctionTorchNpu,))
def insert_torch_npu_in_functions(
    ctx: Context, module: ast.Module, findings: list[Finding]
) -> Iterator[Insertion]:
    offsets = [
        f.edit.start
        for f in findings
        if f.edit is not None and _TORCH_NPU_NAME.search(f.edit.replacement)
    ]
    if not offsets:
        return
    # The functions come from the file's one pass over its statements, in ast.walk's order.
    for scope in sorted(ctx.names.local_scopes, key=LocalScope.walk_order):
        if scope.binds("torch_npu"):
            function = scope.function
            start, end = ctx.span(function)
            if any(start <= offset < end for offset in offsets):
                yield Insertion(
                    FunctionTorchNpu,
                    (Import("torch_npu"),),
                    message=f"import torch_npu in {function.name}(): its own import makes the "
                    "name local to the whole function",
                    inside=function,
                )
