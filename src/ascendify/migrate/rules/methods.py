"""Tensor, Module and Storage members named after the device: ``.cuda()`` and ``.is_cuda``."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascendify.migrate._modes import EVERY_TARGET
from ascendify.migrate._rule import Context, Edit, Finding, Operation, Rule, checks
from ascendify.migrate.rules._own import is_own_member
from ascendify.targets import Safety
from ascendify.targets.devices import ATTRIBUTE_RENAMES, METHOD_RENAMES


class CudaMethod(Rule):
    """What it does: renames the method call ``<expr>.cuda(...)`` to ``<expr>.npu(...)`` (tensors,
    modules, storages, including ``storage.cuda()`` inside a ``map_location`` lambda), and the
    method picked by a conditional (``(x.cuda if gpu else x.cpu)()``). Arguments are kept: ``x.cuda(rank, non_blocking=True)`` becomes ``x.npu(rank, non_blocking=True)``.

    Why: ``.cuda()`` moves data to a CUDA device, which an Ascend host does not have.

    Example: ``model = Net().cuda()`` becomes ``model = Net().npu()``.

    Fix safety: safe. Calls on an imported module (``torch.cuda``) are never renamed, nor the
    project's own ``cuda`` methods (NPU203).
    """

    code = "NPU201"
    name = "cuda-method"
    summary = ".cuda() -> .npu()"
    safety = Safety.SAFE
    triggers = (b".cuda",)


class IsCudaAttribute(Rule):
    """What it does: renames the attribute ``<expr>.is_cuda`` to ``<expr>.is_npu``.

    Why: ``is_cuda`` is False for every tensor on an NPU, so branches on it would take the CPU path.

    Example: ``if x.is_cuda:`` becomes ``if x.is_npu:``.

    Fix safety: safe.
    """

    code = "NPU202"
    name = "is-cuda"
    summary = ".is_cuda -> .is_npu"
    safety = Safety.SAFE
    triggers = (b"is_cuda",)


class OwnCudaMember(Rule):
    """What it does: leaves ``x.is_cuda`` and ``x.cuda()`` alone where they name a member the
    file defines itself (``self.is_cuda = ...`` in a class, its own ``def cuda(self)``, read on
    ``self`` or on an instance of that class), and reports them.

    Why: the project's attribute is not torch's ``Tensor.is_cuda``; renaming it to ``is_npu``
    reads an attribute that does not exist.

    Example: ``if self.is_cuda:`` in a data prefetcher that sets ``self.is_cuda`` in its
    ``__init__`` is left and reported.

    Fix safety: report only.
    """

    code = "NPU203"
    name = "own-cuda-member"
    summary = "member named like torch's but defined by the project (left in place)"
    safety = Safety.REPORT_ONLY
    operation = Operation.ADVICE
    targets = EVERY_TARGET
    triggers = (b"cuda",)


def is_chosen_method(node: ast.Attribute, parent: ast.AST | None) -> bool:
    """``x.cuda`` as one of the methods a conditional picks (``x.cuda if c else x.cpu``)."""
    if node.attr not in METHOD_RENAMES or not isinstance(node.ctx, ast.Load):
        return False
    if isinstance(parent, ast.IfExp) and node is not parent.test:
        other = parent.orelse if node is parent.body else parent.body
        return isinstance(other, ast.Attribute) and other.attr in ("cpu", "to")
    return False


def _rename_attribute(ctx: Context, node: ast.Attribute, new: str) -> Edit:
    """Replace the attribute name, the last token of the node."""
    _, end = ctx.span(node)
    return Edit(end - len(node.attr), end, new)


@checks(ast.Call, rules=(CudaMethod,))
def check_cuda_method(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    func = node.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr in METHOD_RENAMES
        and ctx.names.qualified_name(func.value) is None
        and not is_own_member(ctx, func)
    ):
        new = METHOD_RENAMES[func.attr]
        edit = _rename_attribute(ctx, func, new)
        yield CudaMethod.finding(node, f".{func.attr}() -> .{new}()", edit)


@checks(ast.Attribute, rules=(CudaMethod, IsCudaAttribute, OwnCudaMember))
def check_is_cuda(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Attribute)
    if is_chosen_method(node, parent) and not is_own_member(ctx, node):
        # (x.cuda if on_gpu else x.cpu)(): the bound method is picked, then called.
        if ctx.names.qualified_name(node.value) is None:
            new_method = METHOD_RENAMES[node.attr]
            edit = _rename_attribute(ctx, node, new_method)
            yield CudaMethod.finding(node, f".{node.attr} -> .{new_method}", edit)
        return
    if is_own_member(ctx, node) and isinstance(node.ctx, ast.Load):
        called = isinstance(parent, ast.Call) and parent.func is node
        yield OwnCudaMember.finding(
            node, f".{node.attr}{'()' if called else ''} is the project's own member: left"
        )
        return
    new = ATTRIBUTE_RENAMES.get(node.attr)
    if new is not None and isinstance(node.ctx, ast.Load):
        edit = _rename_attribute(ctx, node, new)
        yield IsCudaAttribute.finding(node, f".{node.attr} -> .{new}", edit)
