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
    if b"cuda" not in data:
        return ()
    try:
        tree = ast.parse(decode(data)[0])
    except (UndecodableSource, SyntaxError, ValueError, RecursionError, MemoryError):
        return ()  # the tree migration reports it
    names = NameResolver()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names.add_import(node)
    reached: dict[str, str] = {}  # a definition's name -> the CUDA-only name it uses itself
    calls: dict[str, set[str]] = {}  # a definition's name -> the names it calls
    for function in ast.walk(tree):
        if isinstance(function, _FUNCTIONS):
            _read_function(
                function, names, is_cuda_only, reached, calls.setdefault(function.name, set())
            )
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


def _read_function(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    names: NameResolver,
    is_cuda_only: Callable[[str], bool],
    reached: dict[str, str],
    calls: set[str],
) -> None:
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                calls.add(func.id)
            elif isinstance(func, ast.Attribute):
                calls.add(func.attr)
        elif isinstance(node, ast.Attribute | ast.Name) and function.name not in reached:
            qualified = names.qualified_name(node)
            if qualified is not None and is_cuda_only(qualified):
                reached[function.name] = qualified
