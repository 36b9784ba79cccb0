"""Files that name ``torch`` without importing it: a star import brings it from where the
migration cannot follow, and its CUDA idioms would otherwise be left without a word."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from ascendify.migrate._modes import EVERY_TARGET
from ascendify.migrate._rule import Context, Finding, Operation, Rule, checks
from ascendify.targets import Safety

_USES_TORCH = re.compile(r"(?<![\w.])torch\.")


class UnfollowedStarImport(Rule):
    """What it does: reports a ``from M import *`` in a file that uses ``torch`` without binding
    it by any import the migration can follow: M lies outside the project (``sys.path.append``,
    an installed package) or brings torch by a route it does not read (``from torch import *`` in
    M does not bind ``torch``).

    Why: the file's ``torch.cuda`` calls are then not known to be torch's and are left as they
    are; the report says so instead of leaving the file silently half-migrated.

    Example: ``from common import *`` (``common.py`` outside SRC) followed by
    ``torch.cuda.synchronize()`` is reported: add ``import torch`` to the file, or migrate the
    directory that holds ``common.py`` with it.

    Fix safety: report only.
    """

    code = "NPU005"
    name = "unfollowed-star-import"
    summary = "torch used through a star import the migration cannot follow (reported)"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    targets = EVERY_TARGET  # the portable target cannot follow it either
    triggers = (b"cuda",)


@checks(ast.ImportFrom, rules=(UnfollowedStarImport,))
def check_star_import(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.ImportFrom)
    module = "." * node.level + (node.module or "")
    if (
        not any(alias.name == "*" for alias in node.names)
        or (node.module or "").split(".")[0] == "torch"
        or "torch" in ctx.names.bindings
        or _USES_TORCH.search(ctx.source.text) is None
        or not _names_torch(ctx)
    ):
        return
    message = (
        f"torch is used but bound by no import the migration can follow (from {module} import *): "
        "its CUDA calls are left as they are; add import torch, or migrate the code that defines "
        f"{module} with this file"
    )
    yield UnfollowedStarImport.finding(node, message)


def _names_torch(ctx: Context) -> bool:
    """Whether code (not a comment or a string) reads the name ``torch``."""
    index = ctx.nodes
    return any(getattr(index.nodes[number], "id", None) == "torch" for number in index.of(ast.Name))
