"""``-r/--replace-unsupported``: calls of APIs the NPU cannot run go to ``ascend_function``.

Which APIs, and with what, is the catalogue's business (:mod:`ascendify.replace.catalogue`); a call is
rewritten only when the chosen torch_npu version's data says the NPU has no kernel for it. The result
gets ``ascend_function/`` with the functions used (:func:`ascendify.migrate.extras.write_extras`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascendify.migrate._imports import Import, Insertion
from ascendify.migrate._modes import EVERY_TARGET
from ascendify.migrate._rule import Context, Finding, Mode, Operation, Rule, checks, finishes
from ascendify.replace.catalogue import PACKAGE, Kind, Replacement, replacement_for
from ascendify.targets import Safety

REPLACE = Mode("replace", lambda modes: modes.replace_unsupported, rank=6, visits_everything=True)


class ReplaceRule(Rule):
    """Base of the rules of ``-r/--replace-unsupported``."""

    mode = REPLACE
    targets = EVERY_TARGET


class ReplaceExact(ReplaceRule):
    """What it does: rewrites a call of an API that the chosen torch_npu version has no NPU kernel
    for to its exact replacement in ``ascend_function``: a composite of operators that do have NPU
    kernels (``torch.linalg.inv``, ``torch.linalg.cholesky`` before 2.13, ``torch.lgamma``,
    ``torch.logcumsumexp``, ``MultivariateNormal``, ...; docs/replace.md lists them).

    Why: without it the operator falls back to the CPU on every call (or fails under
    ``TORCH_NPU_FALLBACK_CPU_DISABLE=1``), and the fix people write by hand is to move the tensors to
    the CPU and back.

    Example::

        cov_inv = torch.linalg.inv(cov)

    becomes::

        cov_inv = ascend_function.linalg_inv(cov)

    Fix safety: unsafe: the same dtype, shape and gradient, but floating-point values differ from the
    original within the tolerance the catalogue states (another order of operations).
    """

    code = "RPL001"
    name = "replace-exact"
    summary = "unsupported API -> exact composite in ascend_function"
    safety = Safety.UNSAFE


class ReplaceFallback(ReplaceRule):
    """What it does: rewrites a call of an API that the chosen torch_npu version has no NPU kernel
    for, and that has no exact composite, to its CPU fallback in ``ascend_function``: the original
    runs on CPU copies and the result moves back to the input's device (``torch.polygamma``,
    ``torch.linalg.eigh``, Gamma/Beta/Dirichlet/Poisson/Binomial sampling, ...).

    Why: it makes the fallback explicit, visible in the code and in this report, and identical on
    every host instead of depending on torch_npu's implicit CPU fallback.

    Example::

        alpha = torch.distributions.Beta(a, a).sample()

    becomes::

        alpha = ascend_function.Beta(a, a).sample()

    Fix safety: unsafe: the values are those of the original on the CPU (random draws come from the
    CPU generator), but every call copies to the CPU and back and waits for the device: slow.
    """

    code = "RPL002"
    name = "replace-fallback"
    summary = "unsupported API -> CPU fallback in ascend_function (slow)"
    safety = Safety.UNSAFE


class ImportAscendFunction(ReplaceRule):
    """What it does: inserts ``import ascend_function`` in files where calls were replaced.

    Why: the replaced calls need the package, which the migration writes at the root of the result.

    Example: the import appears after the file's imports.

    Fix safety: safe.
    """

    code = "RPL003"
    name = "import-ascend-function"
    summary = "insert import ascend_function"
    safety = Safety.SAFE
    operation = Operation.INSERT


def _message(api: str, entry: Replacement) -> str:
    if entry.kind is Kind.EXACT:
        how = f"exact composite, within rtol {entry.rtol:g}, atol {entry.atol:g}"
    else:
        how = "fallback: runs on the CPU, slow"
    return f"{api} -> {entry.reference()} [{entry.kind.value}] ({entry.code}: {how})"


@checks(ast.Call, rules=(ReplaceExact, ReplaceFallback))
def check_call(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    if PACKAGE in ctx.path.split("/")[:-1]:
        return  # migrating a result again: our own packages call the originals on purpose
    api = ctx.names.qualified_name(node.func)
    entry = replacement_for(api, ctx.facts)
    if api is None or entry is None:
        return
    rule = ReplaceExact if entry.kind is Kind.EXACT else ReplaceFallback
    yield rule.finding(node, _message(api, entry), ctx.replace(node.func, entry.reference()))


@finishes(rules=(ImportAscendFunction,))
def insert_import(ctx: Context, module: ast.Module, findings: list[Finding]) -> Iterator[Insertion]:
    if any(f.rule in (ReplaceExact, ReplaceFallback) and f.edit for f in findings):
        yield Insertion(ImportAscendFunction, (Import(PACKAGE),))
