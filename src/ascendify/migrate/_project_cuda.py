"""Which functions and methods of a project module reach a call that runs on CUDA only.

Read by the project pass (:mod:`ascendify.migrate._project`) for the portable target, only for the
modules that a file checking ``torch.cuda.is_available()`` imports: ``if
torch.cuda.is_available(): tracker.save()`` keeps its check when ``save``, a method of the module
``tracker`` comes from, calls ``torch.cuda.nvtx.range_push`` (which the migration leaves, as it
has no device-agnostic spelling). Functions are known by name, as within a file: a call of a name
the module defines may run any definition of that name, and one that calls another reaches what
that one reaches.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from ascendify.source import NameResolver, UndecodableSource, decode

# A definition and the first CUDA-only name it reaches (``torch.cuda.nvtx.range_push``).
CudaOnlyFunction = tuple[str, str]
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def cuda_only_functions(
    data: bytes, is_cuda_only: Callable[[str], bool]
) -> tuple[CudaOnlyFunction, ...]:
    """The functions and methods of a module's source (by name) that reach a qualified name
    ``is_cuda_only`` accepts, themselves or through the module's other functions they call."""
    if not _may_name_cuda_only(data, is_cuda_only):
        return ()
    try:
        tree = ast.parse(decode(data)[0])
    except (UndecodableSource, SyntaxError, ValueError, RecursionError, MemoryError):
        return ()  # the tree migration reports it
    reached, calls = _read_module(tree, is_cuda_only)
    changed = True
    while changed:  # a function calling one that reaches a CUDA-only name reaches it too
        changed = False
        for name, called in calls.items():
            if name in reached:
                continue
            through = next((reached[other] for other in sorted(called) if other in reached), None)
            if through is not None:
                reached[name] = through
                changed = True
    return tuple(sorted(reached.items()))


# ``torch.cuda.nvtx.range_push``: a chain through torch.cuda as most code spells it.
_CUDA_CHAIN = re.compile(rb"torch\.cuda((?:\.\w+)+)")
# Names taken from torch.cuda or a module of it, or torch.cuda bound to another name: the chains
# then spell other names, and the module is read whole.
_OTHER_SPELLINGS = re.compile(
    rb"from[ \t]+torch\.cuda\b|import[ \t]+torch\.cuda[\w.]*[ \t]+as\b"
    rb"|from[ \t]+torch[ \t]+import[^\n]*\bcuda\b|import[ \t]+torch[ \t]+as\b"
)


def _may_name_cuda_only(data: bytes, is_cuda_only: Callable[[str], bool]) -> bool:
    """Whether the text may name a CUDA-only member: most modules (torch's own) spell only
    members the migration ports, and are not parsed."""
    if b"cuda" not in data:
        return False
    if _OTHER_SPELLINGS.search(data):
        return True
    chains = {match.group(1) for match in _CUDA_CHAIN.finditer(data)}
    return any(is_cuda_only("torch.cuda" + chain.decode("ascii", "replace")) for chain in chains)


def _read_module(
    tree: ast.Module, is_cuda_only: Callable[[str], bool]
) -> tuple[dict[str, str], dict[str, set[str]]]:
    """Per definition name: the CUDA-only name it uses itself, and the names it calls (a nested
    definition's calls count for the one around it too). One walk; names are resolved after it,
    once every import (wherever it stands) is bound."""
    names = NameResolver()
    calls: dict[str, set[str]] = {}
    used: list[tuple[tuple[str, ...], ast.expr]] = []  # (the definitions around, a name chain)
    stack: list[tuple[ast.AST, tuple[str, ...]]] = [(tree, ())]
    while stack:
        node, around = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            names.add_import(node)
        elif isinstance(node, _FUNCTIONS):
            around = (*around, node.name)
            calls.setdefault(node.name, set())
        elif isinstance(node, ast.Call) and around:
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if called is not None:
                for name in around:
                    calls[name].add(called)
        if isinstance(node, ast.Attribute | ast.Name) and around:
            used.append((around, node))
        stack.extend((child, around) for child in ast.iter_child_nodes(node))
    reached: dict[str, str] = {}
    for around, node in used:
        if all(name in reached for name in around):
            continue
        qualified = names.qualified_name(node)
        if qualified is not None and is_cuda_only(qualified):
            for name in around:
                reached.setdefault(name, qualified)
    return reached, calls
