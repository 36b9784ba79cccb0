"""API renames by qualified name, shared by every family that maps names through the targets table.

One checker visits each maximal name chain (``th.cuda.amp.autocast``, not its parts), resolves it
through the file's imports, maps it with :func:`ascendify.targets.match_api` and hands the finding to
the family whose qualified-name prefix matches longest (``torch.cuda.amp`` beats ``torch.cuda``).
Import statements whose names all move to one NPU module are rewritten in place, so
``from torch.cuda.amp import autocast`` becomes ``from torch_npu.npu.amp import autocast`` and its
uses need no edit.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ascendify.migrate._rule import Context, Edit, Finding, Rule, binding_trigger, checks
from ascendify.source import Binding, import_bindings
from ascendify.targets import ApiMatch, Safety, explicit_targets, match_api
from ascendify.targets.apis import MODULE_AS_VALUE, SAME_NAME_NAMESPACES


@dataclass
class MovedImports:
    """The names whose import statement this file's migration rewrote (the import checkers run first).

    ``from torch.cuda.amp import autocast`` -> ``from torch_npu.npu.amp import autocast``: the uses of
    ``autocast`` already mean the NPU name and are left alone.
    """

    names: dict[str, tuple[str, str]] = field(default_factory=dict)  # local -> (was, now)

    def current(self, local: str, binding: Binding) -> str:
        """What ``local`` (bound to ``binding``) means once the rewritten imports are in place."""
        was, now = self.names.get(local, (None, binding.qualified))
        return now if was == binding.qualified else binding.qualified


@dataclass(frozen=True)
class ApiFamily:
    prefixes: tuple[str, ...]  # qualified-name prefixes, matched on whole components
    rules: dict[Safety, type[Rule]]


_FAMILIES: list[ApiFamily] = []


def api_family(prefixes: Iterable[str], rules: dict[Safety, type[Rule]]) -> None:
    """Claim API names under ``prefixes`` for the given rules (one per safety class).

    The longest matching prefix wins; the empty prefix matches every name (the catch-all family).
    """
    _FAMILIES.append(ApiFamily(tuple(prefixes), rules))


def _family_rules() -> Iterator[type[Rule]]:
    """Every rule a family claims names for (known once every rule module is imported)."""
    for family in _FAMILIES:
        yield from family.rules.values()


def rule_for(qualified: str, safety: Safety) -> type[Rule] | None:
    best: tuple[int, type[Rule]] | None = None
    for family in _FAMILIES:
        rule = family.rules.get(safety)
        if rule is None:
            continue
        for prefix in family.prefixes:
            matches = not prefix or qualified == prefix or qualified.startswith(prefix + ".")
            if matches and (best is None or len(prefix) > best[0]):
                best = (len(prefix), rule)
    return None if best is None else best[1]


# Names a table entry can be reached through; a local name bound to one is a trigger token.
_ROOTS = frozenset((*SAME_NAME_NAMESPACES, *(target.cuda for target in explicit_targets())))


@binding_trigger
def _leads_to_api(qualified: str) -> bool:
    """Whether ``qualified`` is a table name or lies below one (``torch.cuda.amp.autocast``)."""
    prefix = qualified
    while prefix:
        if prefix in _ROOTS:
            return True
        prefix = prefix.rpartition(".")[0]
    return False


def _finding(
    node: ast.AST, qualified: str, match: ApiMatch, edit_text: str | None, ctx: Context
) -> Finding | None:
    rule = rule_for(qualified, match.target.safety)
    if rule is None:
        return None
    note = match.target.note
    if edit_text is None:
        return rule.finding(node, f"{qualified}: {note or 'no NPU counterpart'}")
    message = f"{qualified} -> {match.npu_name}" + (f" ({note})" if note else "")
    return rule.finding(node, message, ctx.replace(node, edit_text))


@checks(ast.Name, ast.Attribute, rules=_family_rules)
def check_name_chain(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    if isinstance(parent, ast.Attribute) and parent.value is node:
        return  # only the whole chain is looked up
    assert isinstance(node, ast.Name | ast.Attribute)
    resolved = ctx.names.resolve(node)
    if resolved is None:
        return
    binding, rest = resolved
    qualified = ".".join([binding.qualified, *rest])
    match = match_api(qualified, ctx.facts)
    if match is None or _is_module_alias(node, parent, match):
        return
    if match.npu_name is None:
        found = _finding(node, qualified, match, None, ctx)
    else:
        local = node.id if isinstance(node, ast.Name) else _root_name(node)
        now = ctx.state(MovedImports).current(local, binding)
        if match.npu_name == ".".join([now, *rest]) or not isinstance(node.ctx, ast.Load):
            return
        if match.npu_name.startswith(now + "."):
            spelled = local + match.npu_name[len(now) :]
        else:
            spelled = match.npu_name
        found = _finding(node, qualified, match, spelled, ctx)
    if found is not None:
        yield found


def _is_module_alias(node: ast.AST, parent: ast.AST | None, match: ApiMatch) -> bool:
    """``CD = torch.cuda``: an alias the file's names resolve through (its uses are mapped)."""
    return (
        match.target is MODULE_AS_VALUE
        and isinstance(parent, ast.Assign)
        and parent.value is node
        and all(isinstance(target, ast.Name) for target in parent.targets)
    )


def _root_name(node: ast.expr) -> str:
    while isinstance(node, ast.Attribute):
        node = node.value
    assert isinstance(node, ast.Name)
    return node.id


@checks(ast.ImportFrom, ast.Import, rules=_family_rules)
def check_import(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    """Move an import whose names all exist under one NPU module; report unsupported names."""
    assert isinstance(node, ast.Import | ast.ImportFrom)
    moves: list[tuple[str, str, ApiMatch]] = []  # (local, qualified, match)
    for local, qualified, alias in import_bindings(node):
        if isinstance(node, ast.Import) and alias.asname is None:
            continue  # "import torch.cuda" binds "torch": its uses are mapped one by one
        match = match_api(qualified, ctx.facts)
        if match is None:
            return
        if match.npu_name is None:
            found = _finding(node, qualified, match, None, ctx)
            if found is not None:
                yield found
            return
        moves.append((local, qualified, match))
    if not moves:
        return
    if isinstance(node, ast.ImportFrom):
        yield from _move_from_import(ctx, node, moves)
    else:
        yield from _move_import_as(ctx, node, moves)


def _move_from_import(
    ctx: Context, node: ast.ImportFrom, moves: list[tuple[str, str, ApiMatch]]
) -> Iterator[Finding]:
    assert node.module is not None
    new_modules = {_same_name_module(qualified, match) for _, qualified, match in moves}
    if len(new_modules) != 1 or None in new_modules:
        return  # renamed or scattered names: their uses are rewritten one by one instead
    (new_module,) = new_modules
    assert new_module is not None
    pattern = r"from\s+(" + r"\s*\.\s*".join(map(re.escape, node.module.split("."))) + r")\s"
    message = f"from {node.module} import -> from {new_module} import"
    yield from _move(ctx, node, moves, pattern=pattern, new_text=new_module, message=message)


def _move_import_as(
    ctx: Context, node: ast.Import, moves: list[tuple[str, str, ApiMatch]]
) -> Iterator[Finding]:
    if len(moves) != 1 or len(node.names) != 1:
        return
    _, qualified, match = moves[0]
    if _same_name_module(qualified, match) is None:
        return
    assert match.npu_name is not None
    pattern = r"import\s+(" + r"\s*\.\s*".join(map(re.escape, qualified.split("."))) + r")\s"
    message = f"import {qualified} -> import {match.npu_name}"
    yield from _move(ctx, node, moves, pattern=pattern, new_text=match.npu_name, message=message)


def _same_name_module(qualified: str, match: ApiMatch) -> str | None:
    """The NPU module holding the same name (``torch_npu.npu.amp`` for ``torch.cuda.amp.autocast``)."""
    assert match.npu_name is not None
    new_module, _, new_name = match.npu_name.rpartition(".")
    return new_module if new_name == qualified.rpartition(".")[2] else None


def _move(
    ctx: Context,
    node: ast.Import | ast.ImportFrom,
    moves: list[tuple[str, str, ApiMatch]],
    *,
    pattern: str,
    new_text: str,
    message: str,
) -> Iterator[Finding]:
    """Replace the module path matched by ``pattern`` and record where the bound names now point."""
    start, end = ctx.span(node)
    found = re.match(pattern, ctx.source.text[start:end])
    if found is None:
        return  # an odd spelling (line continuations): the uses are rewritten instead
    worst = max((match for _, _, match in moves), key=lambda m: m.target.safety is Safety.UNSAFE)
    rule = rule_for(moves[0][1], worst.target.safety)
    if rule is None:
        return
    moved = ctx.state(MovedImports)
    for local, qualified, match in moves:
        assert match.npu_name is not None  # only names with an NPU counterpart move
        moved.names[local] = (qualified, match.npu_name)
    edit = Edit(start + found.start(1), start + found.end(1), new_text)
    yield rule.finding(node, message, edit)
