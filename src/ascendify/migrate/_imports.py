"""The one place that adds top-level lines to a migrated file: the imports rules need, and the code
that must follow them (the distributed prelude, the ``DEVICE_ID`` lines).

Finishers do not edit: they return :class:`Insertion` requests (which rule reports them, what it
imports, what code follows). After every finisher has run, :meth:`Insertions.findings` turns the
requests into edits, in the order they were made, with one policy:

- an import is left out when the file has it already (a top-level ``import X`` or ``import X.sub``
  without ``as``, also inside ``if`` and ``try`` blocks, their ``else``, ``except`` and ``finally``
  parts; ``from M import N`` likewise) or an earlier request asks for it;
- a block goes after the file's leading imports; an insertion that follows a given module (``import
  torch_npu`` follows torch, which it patches) goes right after the first top-level import of that
  module. Without such a statement it goes after the preamble (the module docstring and ``from
  __future__`` imports, which must stay first), or before the first statement, after any leading
  comments (a coding cookie stays first).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from ascendify.migrate._rule import Context, Edit, Finding, Rule

# Python prints the failing line of a traceback: where torch_npu is missing, the comment says what to do.
IMPORT_TORCH_NPU = "import torch_npu  # Ascend NPU build; elsewhere: --target portable, or python -m ascendify.auto"


@dataclass(frozen=True)
class Import:
    """``import module``, or ``from module import name``."""

    module: str
    name: str | None = None

    @property
    def line(self) -> str:
        if self.name is not None:
            return f"from {self.module} import {self.name}"
        return IMPORT_TORCH_NPU if self.module == "torch_npu" else f"import {self.module}"

    def provides(self, wanted: Import) -> bool:
        """Whether this import makes ``wanted`` unnecessary (``import a.b`` imports ``a`` too)."""
        if wanted.name is not None or self.name is not None:
            return self == wanted
        return self.module == wanted.module or self.module.startswith(wanted.module + ".")


@dataclass(frozen=True)
class Insertion:
    """A finisher's request: ``rule`` reports the inserted lines (one finding)."""

    rule: type[Rule]
    imports: tuple[Import, ...]
    code: tuple[str, ...] = ()  # top-level lines after the imports, which may use them
    message: str = ""  # "" names the imports inserted
    # Right after the first import of this module (torch for torch_npu), not after every import.
    follows: str | None = None
    # ... but before it when that import is of this module (torch.npu exists once torch_npu is in).
    precedes: str | None = None
    # At the start of this function's body instead (after its docstring): the function binds a
    # name of the imports locally, so the module's import does not reach its other branches.
    inside: ast.FunctionDef | ast.AsyncFunctionDef | None = None


@dataclass
class Insertions:
    """This file's requests, in the order the finishers made them (a per-file state)."""

    requested: list[Insertion] = field(default_factory=list)

    def findings(self, ctx: Context, module: ast.Module) -> Iterator[Finding]:
        """One finding per request that still has something to insert."""
        present = list(_present(module))
        for insertion in self.requested:
            if insertion.inside is not None:
                found = _in_function(ctx, insertion)
                if found is not None:
                    yield found
                continue
            imports = [
                wanted
                for wanted in insertion.imports
                if not any(done.provides(wanted) for done in present)
            ]
            present.extend(imports)
            lines = [wanted.line for wanted in imports]
            if lines or insertion.code:
                yield _finding(ctx, module, insertion, [*lines, *insertion.code])


def _present(module: ast.Module) -> Iterator[Import]:
    """What the imports that run with the module bind under their own names (also inside if/try)."""
    stack: list[ast.stmt] = list(module.body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, ast.Import):
            yield from (Import(a.name) for a in stmt.names if a.asname is None)
        elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
            yield from (Import(stmt.module, a.name) for a in stmt.names if a.asname is None)
        elif isinstance(stmt, ast.If | ast.Try):
            stack.extend([*stmt.body, *stmt.orelse])
            if isinstance(stmt, ast.Try):
                stack.extend(stmt.finalbody)
                for handler in stmt.handlers:
                    stack.extend(handler.body)


def local_name_of(ctx: Context, qualified: str) -> str | None:
    """A local name bound to the module ``qualified`` by the file's imports (``th`` for torch)."""
    names = [local for local, b in ctx.names.bindings.items() if b.qualified == qualified]
    if qualified in names:
        return qualified
    return names[0] if names else None


def _finding(ctx: Context, module: ast.Module, insertion: Insertion, lines: list[str]) -> Finding:
    anchor = _anchor(module, insertion.follows)
    message = insertion.message or "; ".join(lines)
    # An insertion after a given import is reported on that import; a block after the imports on
    # the file as a whole.
    reported: ast.AST = module
    if insertion.follows is not None:
        reported = anchor or (module.body[0] if module.body else module)
    if (
        anchor is not None
        and insertion.precedes is not None
        and first_import_of(module, insertion.precedes) is anchor
        and anchor.col_offset == 0
    ):
        # ``from torch.npu import amp`` first: the lines go before it.
        offset = ctx.source.offset(anchor.lineno, 0)
        text = "".join(line + ctx.source.newline() for line in lines)
        return insertion.rule.finding(reported, message, Edit(offset, offset, text))
    return insertion.rule.finding(reported, message, _insert_after(ctx, module, anchor, lines))


def _in_function(ctx: Context, insertion: Insertion) -> Finding | None:
    """The imports as the first statements of the function's body (after its docstring), indented
    as that body; None for a body on the ``def`` line."""
    function = insertion.inside
    assert function is not None
    body = function.body
    first = body[1] if len(body) > 1 and _is_preamble(0, body[0]) else body[0]
    indent = ctx.source.line(first.lineno)[: first.col_offset]
    if first.lineno == function.lineno or not indent or not indent.isspace():
        return None  # the body shares a line with the def or another statement
    newline = ctx.source.newline()
    lines = [wanted.line for wanted in insertion.imports]
    offset = ctx.source.offset(first.lineno, 0)
    text = "".join(indent + line + newline for line in lines)
    message = insertion.message or "; ".join(lines)
    return insertion.rule.finding(function, message, Edit(offset, offset, text))


def _insert_after(
    ctx: Context, module: ast.Module, anchor: ast.stmt | None, lines: list[str]
) -> Edit:
    """Lines after ``anchor``; without one before the first statement (after any leading comments,
    so a coding cookie stays first), or at the end of a file without statements."""
    newline = ctx.source.newline()
    text = "".join(line + newline for line in lines)
    if anchor is None and module.body:
        offset = ctx.source.offset(module.body[0].lineno, 0)
    elif anchor is None:
        offset = len(ctx.source.text)
        if ctx.source.text and not ctx.source.text.endswith(("\n", "\r")):
            text = newline + text
    else:
        end = anchor.end_lineno or anchor.lineno
        offset = ctx.source.offset(end, 0) + len(ctx.source.line(end))
        if not ctx.source.line(end).endswith(("\n", "\r")):
            text = newline + text.removesuffix(newline)
    return Edit(offset, offset, text)


def _anchor(module: ast.Module, follows: str | None) -> ast.stmt | None:
    """The statement the insertion goes after (None: before the first statement)."""
    if follows is not None:
        found = first_import_of(module, follows)
        if found is not None:
            return found
    anchor = None
    for index, stmt in enumerate(module.body):
        leading_import = follows is None and isinstance(stmt, ast.Import | ast.ImportFrom)
        if not (_is_preamble(index, stmt) or leading_import):
            break
        anchor = stmt
    return anchor


def first_import_of(module: ast.Module, name: str) -> ast.stmt | None:
    """The first top-level statement importing from the module ``name`` or below it, any alias
    (``import torch.nn as nn``, ``from torch import cuda``)."""
    wanted = Import(name)
    for stmt in module.body:
        if isinstance(stmt, ast.Import) and any(
            Import(alias.name).provides(wanted) for alias in stmt.names
        ):
            return stmt
        if isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module:
            named = [Import(stmt.module), *(Import(f"{stmt.module}.{a.name}") for a in stmt.names)]
            if any(found.provides(wanted) for found in named):
                return stmt  # from torch.npu import amp, from torch import npu
    return None


def _is_preamble(index: int, stmt: ast.stmt) -> bool:
    """The module docstring and ``from __future__`` imports, which must stay first."""
    is_docstring = (
        index == 0
        and isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )
    return is_docstring or (isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__")
