"""Environment variables read or set by the script: ``CUDA_VISIBLE_DEVICES`` and friends."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascendify.migrate._rule import Context, Finding, Operation, Rule, checks
from ascendify.migrate.rules._literals import literal_edit
from ascendify.targets import Safety
from ascendify.targets.devices import ENV_VARS, ENV_VARS_BY_CUDA_NAME

# Calls whose first argument names an environment variable.
_ENV_FUNCTIONS = frozenset({"os.getenv", "os.putenv", "os.unsetenv"})
_ENV_METHODS = frozenset({"get", "setdefault", "pop"})  # on os.environ


class EnvVar(Rule):
    """What it does: renames CUDA/NCCL environment variables to their Ascend counterparts where the
    script reads or sets them: ``os.environ[...]``, ``os.environ.get/setdefault/pop``,
    ``os.getenv``, ``os.putenv``, ``"X" in os.environ``, and the keys of an ``env={...}`` dict
    passed to a call (subprocess). ``CUDA_VISIBLE_DEVICES`` becomes ``ASCEND_RT_VISIBLE_DEVICES``,
    ``PYTORCH_CUDA_ALLOC_CONF`` becomes ``PYTORCH_NPU_ALLOC_CONF``, ``TORCH_NCCL_*`` becomes
    ``TORCH_HCCL_*``, ``NCCL_*`` counterparts become ``HCCL_*``.

    Why: the Ascend runtime reads its own variables; the CUDA ones are silently ignored.

    Example: ``os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"`` becomes
    ``os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0,1"``.

    Fix safety: safe. Only literals in those positions are renamed, never other strings.
    """

    code = "NPU801"
    name = "env-var"
    summary = "CUDA/NCCL environment variable -> Ascend counterpart"
    safety = Safety.SAFE
    triggers = tuple(target.cuda.encode() for target in ENV_VARS if target.npu)


class EnvVarUnsupported(Rule):
    """What it does: reports CUDA environment variables without an Ascend counterpart
    (``CUBLAS_WORKSPACE_CONFIG``, ``NVIDIA_TF32_OVERRIDE``, ``NCCL_DEBUG``).

    Why: setting them has no effect on NPU; the behaviour they control needs another setting.

    Example: ``os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"`` is reported (determinism on NPU:
    ``torch.use_deterministic_algorithms``).

    Fix safety: report only.
    """

    code = "NPU802"
    name = "env-var-unsupported"
    summary = "CUDA environment variable without an NPU counterpart (left in place)"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    triggers = tuple(target.cuda.encode() for target in ENV_VARS if not target.npu)


def _env_name_nodes(ctx: Context, node: ast.AST) -> Iterator[ast.expr]:
    """Expressions that name an environment variable in ``node``."""
    if isinstance(node, ast.Subscript) and _is_environ(ctx, node.value):
        yield node.slice
    elif isinstance(node, ast.Call):
        func = node.func
        named = ctx.names.qualified_name(func) in _ENV_FUNCTIONS or (
            isinstance(func, ast.Attribute)
            and func.attr in _ENV_METHODS
            and _is_environ(ctx, func.value)
        )
        if named and node.args:
            yield node.args[0]
        for keyword in node.keywords:
            if keyword.arg == "env" and isinstance(keyword.value, ast.Dict):
                yield from (key for key in keyword.value.keys if key is not None)
    elif isinstance(node, ast.Compare) and any(_is_environ(ctx, c) for c in node.comparators):
        yield node.left


def _is_environ(ctx: Context, node: ast.expr) -> bool:
    return ctx.names.qualified_name(node) == "os.environ"


@checks(ast.Subscript, ast.Call, ast.Compare, rules=(EnvVar, EnvVarUnsupported))
def check_env(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    for name_node in _env_name_nodes(ctx, node):
        if not (isinstance(name_node, ast.Constant) and isinstance(name_node.value, str)):
            continue
        target = ENV_VARS_BY_CUDA_NAME.get(name_node.value)
        if target is None:
            continue
        if target.npu is None:
            yield EnvVarUnsupported.finding(
                name_node, f"{target.cuda} has no NPU counterpart: {target.note}"
            )
            continue
        edited = literal_edit(ctx, name_node, {target.cuda: target.npu}.get)
        if edited is not None:
            yield EnvVar.finding(name_node, f"{target.cuda} -> {target.npu}", edited[2])
