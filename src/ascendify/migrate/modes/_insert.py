"""Where mode rules put new top-level lines: after the file's imports, or after its first torch import."""

from __future__ import annotations

import ast

from ascendify.migrate._rule import Context, Edit

# Python prints the failing line of a traceback: where torch_npu is missing, the comment says what to do.
IMPORT_TORCH_NPU = "import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto"


def import_line(module: str) -> str:
    """The line that imports MODULE in a migrated file (torch_npu's carries its hint)."""
    return IMPORT_TORCH_NPU if module == "torch_npu" else f"import {module}"


def _is_preamble(stmt: ast.stmt) -> bool:
    """The module docstring and ``from __future__`` imports, which must stay first."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return isinstance(stmt.value.value, str)
    return isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"


def _line_end(ctx: Context, line: int) -> int:
    return ctx.source.offset(line, 0) + len(ctx.source.line(line))


def insert_lines(
    ctx: Context, module: ast.Module, lines: list[str], *, after_imports: bool
) -> Edit:
    """An edit adding ``lines`` after the leading imports (``after_imports``) or before the first
    statement that is not preamble; at the end of an empty file."""
    newline = ctx.source.newline()
    body = module.body
    anchor: ast.stmt | None = None
    for stmt in body:
        if _is_preamble(stmt) or (after_imports and isinstance(stmt, ast.Import | ast.ImportFrom)):
            anchor = stmt
            continue
        break
    if anchor is None and body and not _is_preamble(body[0]):
        offset = ctx.source.offset(body[0].lineno, 0)
        return Edit(offset, offset, "".join(line + newline for line in lines))
    if anchor is None:
        end = len(ctx.source.text)
        prefix = "" if not ctx.source.text or ctx.source.text.endswith(("\n", "\r")) else newline
        return Edit(end, end, prefix + "".join(line + newline for line in lines))
    line = anchor.end_lineno or anchor.lineno
    offset = _line_end(ctx, line)
    text = "".join(line + newline for line in lines)
    if not ctx.source.line(line).endswith(("\n", "\r")):
        text = newline + text.removesuffix(newline)
    return Edit(offset, offset, text)


def local_name_of(ctx: Context, qualified: str) -> str | None:
    """A local name bound to the module ``qualified`` by the file's imports (``th`` for torch)."""
    names = [local for local, b in ctx.names.bindings.items() if b.qualified == qualified]
    if qualified in names:
        return qualified
    return names[0] if names else None


def imports_module(module: ast.Module, name: str) -> bool:
    """Whether a top-level ``import name`` exists (also inside try/if)."""
    stack: list[ast.stmt] = list(module.body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, ast.Import) and any(
            alias.name == name and alias.asname is None for alias in stmt.names
        ):
            return True
        if isinstance(stmt, ast.If | ast.Try):
            stack.extend(stmt.body)
            stack.extend(stmt.orelse)
    return False
