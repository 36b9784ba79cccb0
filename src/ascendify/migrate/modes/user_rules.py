"""``--rules FILE``: the user's renames and argument changes (parsed by :mod:`ascendify.migrate.rulefile`).

They run before the built-in rules: where a user edit and a built-in edit touch the same text, the user
edit wins (``priority = -1``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from ascendify.migrate._imports import Import, Insertion
from ascendify.migrate._modes import EVERY_TARGET, ChangeArgument, RenameFunction, RenameModule
from ascendify.migrate._rule import (
    Context,
    Edit,
    Finding,
    Mode,
    Operation,
    Rule,
    checks,
    finishes,
)
from ascendify.targets import Safety

USER_RULES = Mode(
    "rules", rank=5, visits_everything=True, when=lambda modes: bool(modes.user_rules)
)


class UserRule(Rule):
    """Base of the rules of ``--rules FILE``: they win over the built-in rules' edits."""

    mode = USER_RULES
    targets = EVERY_TARGET
    priority = -1


@dataclass
class _UserRulesFile:
    """What the user rules work out for one file."""

    # local name -> what a rewritten import binds it to (its uses then need no edit)
    moved: dict[str, str] = field(default_factory=dict)
    imported: set[str] = field(default_factory=set)  # modules rewritten imports now import
    needed: set[str] = field(default_factory=set)  # modules that rewritten uses name


class UserRenameFunction(UserRule):
    """What it does: renames a function (or class) given by ``[[rename_function]]`` in the rules file
    wherever the code refers to it, through any import alias.

    Why: projects have their own CUDA helpers with NPU counterparts that no built-in rule knows.

    Example: with ``old = "ops.cuda_sync"``, ``new = "ops.npu_sync"``, ``ops.cuda_sync()`` becomes
    ``ops.npu_sync()``.

    Fix safety: safe (it does what the rules file says; each change names its rule's line).
    """

    code = "USR001"
    name = "user-rename-function"
    summary = "user rule: rename a function"
    safety = Safety.SAFE


class UserRenameModule(UserRule):
    """What it does: renames a module given by ``[[rename_module]]`` in imports (``import old``,
    ``import old.sub as x``, ``from old import y``) and in qualified uses (``old.f()``).

    Why: a CUDA-only package often has an NPU twin with the same API.

    Example: with ``old = "cuda_kernels"``, ``new = "npu_kernels"``,
    ``from cuda_kernels import fused`` becomes ``from npu_kernels import fused``.

    Fix safety: safe (as the rules file says).
    """

    code = "USR002"
    name = "user-rename-module"
    summary = "user rule: rename a module"
    safety = Safety.SAFE


class UserChangeArgument(UserRule):
    """What it does: sets, adds or removes one argument of the calls named by ``[[change_argument]]``
    (found by keyword, or by position).

    Why: APIs that differ between devices by an argument (a ``map_location``, a flag).

    Example: with ``function = "torch.load"``, ``keyword = "map_location"``, ``value = '"cpu"'``,
    ``torch.load(path)`` becomes ``torch.load(path, map_location="cpu")``.

    Fix safety: safe (as the rules file says).
    """

    code = "USR003"
    name = "user-change-argument"
    summary = "user rule: change an argument"
    safety = Safety.SAFE


class UserImport(UserRule):
    """What it does: inserts ``import M`` for the module of a renamed function or module that the
    file does not import yet.

    Why: the new name must be bound where it is used.

    Example: ``ops.cuda_sync()`` renamed to ``npu_ops.sync()`` adds ``import npu_ops``.

    Fix safety: safe.
    """

    code = "USR004"
    name = "user-import"
    summary = "user rule: import the module of a new name"
    safety = Safety.SAFE


class UserRenameBoundRoot(UserRule):
    """What it does: reports a rename whose new name starts with a name the file binds to another
    module (``new = "AA.BB.new_name"`` in a file with ``import mylib as AA``).

    Why: the new name then reads through the file's own ``AA``: the call made is
    ``mylib.BB.new_name``, which may not be the ``AA`` the rule meant (and ``import AA.BB`` is not
    added: it would rebind ``AA`` for the rest of the file).

    Example: ``old_name()`` becomes ``AA.BB.new_name()`` and is reported: "AA is mylib here".

    Fix safety: report only (the rename itself is USR001's).
    """

    code = "USR005"
    name = "user-rename-bound-root"
    summary = "user rule: the new name's root is another module in this file"
    safety = Safety.REPORT_ONLY
    operation = Operation.ADVICE


def _prefixes(dotted: str) -> list[str]:
    """``a.b.c`` -> ``a``, ``a.b``, ``a.b.c`` (what ``import a.b.c`` makes usable)."""
    parts = dotted.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts) + 1)]


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


@checks(ast.Import, ast.ImportFrom, rules=(UserRenameFunction, UserRenameModule))
def check_module_import(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Import | ast.ImportFrom)
    for rule in ctx.modes.user_rules:
        if isinstance(rule, RenameFunction) and isinstance(node, ast.ImportFrom):
            yield from _function_import(ctx, node, rule)
        if not isinstance(rule, RenameModule):
            continue
        start, end = ctx.span(node)
        text = ctx.source.text[start:end]
        if isinstance(node, ast.ImportFrom):
            if node.level or not node.module or not _under(node.module, rule.old):
                continue
            at = text.find(node.module)
            new_module = rule.new + node.module[len(rule.old) :]
            for alias in node.names:
                ctx.state(_UserRulesFile).moved[alias.asname or alias.name] = (
                    f"{new_module}.{alias.name}"
                )
            ctx.state(_UserRulesFile).imported.add(new_module)
            edit = Edit(start + at, start + at + len(rule.old), rule.new)
            yield UserRenameModule.finding(node, f"{rule.old} -> {rule.new} ({rule.origin})", edit)
            return
        for alias in node.names:
            if not _under(alias.name, rule.old):
                continue
            at = text.find(alias.name)
            if at < 0:
                continue
            local = alias.asname or alias.name.partition(".")[0]
            new_name = rule.new + alias.name[len(rule.old) :]
            ctx.state(_UserRulesFile).imported.update(_prefixes(new_name))
            if alias.asname:
                ctx.state(_UserRulesFile).moved[local] = new_name
            edit = Edit(start + at, start + at + len(rule.old), rule.new)
            yield UserRenameModule.finding(node, f"{rule.old} -> {rule.new} ({rule.origin})", edit)


def _function_import(ctx: Context, node: ast.ImportFrom, rule: RenameFunction) -> Iterator[Finding]:
    """``from ops import cuda_sync`` -> ``from ops import npu_sync as cuda_sync``: uses stay as written."""
    new_module, _, new_name = rule.new.rpartition(".")
    if node.level or not node.module or not new_module:
        return
    for alias in node.names:
        if f"{node.module}.{alias.name}" != rule.old:
            continue
        local = alias.asname or alias.name
        named = new_name if local == new_name else f"{new_name} as {local}"
        if new_module == node.module:
            start, _ = ctx.span(alias)
            end = (
                start
                + len(alias.name)
                + (0 if alias.asname is None else len(ctx.segment(alias)) - len(alias.name))
            )
            edit = Edit(start, end, named)
        elif len(node.names) == 1:
            edit = ctx.replace(node, f"from {new_module} import {named}")
        else:
            return  # names from several modules: each use is rewritten instead
        ctx.state(_UserRulesFile).moved[local] = rule.new
        yield UserRenameFunction.finding(node, f"{rule.old} -> {rule.new} ({rule.origin})", edit)


@checks(ast.Name, ast.Attribute, rules=(UserRenameFunction, UserRenameModule, UserRenameBoundRoot))
def check_name(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    if isinstance(parent, ast.Attribute) and parent.value is node:
        return
    assert isinstance(node, ast.Name | ast.Attribute)
    if not isinstance(node.ctx, ast.Load):
        return
    resolved = ctx.names.resolve(node)
    if resolved is None:
        return
    binding, rest = resolved
    qualified = ".".join([binding.qualified, *rest])
    for rule in ctx.modes.user_rules:
        kind: type[Rule]
        if isinstance(rule, RenameFunction) and qualified == rule.old:
            new, kind = rule.new, UserRenameFunction
        elif isinstance(rule, RenameModule) and _under(qualified, rule.old):
            new, kind = rule.new + qualified[len(rule.old) :], UserRenameModule
        else:
            continue
        local = node.id if isinstance(node, ast.Name) else ctx.segment(node).partition(".")[0]
        current = ctx.state(_UserRulesFile).moved.get(local, binding.qualified)
        if ".".join([current, *rest]) == new:
            return
        if _under(new, current) and local == _root_text(node):
            text = local + new[len(current) :]
        else:
            text = new
            ctx.state(_UserRulesFile).needed.add(new.rpartition(".")[0])
            yield from _bound_root(ctx, node, new, rule.origin)
        message = f"{qualified} -> {new} ({rule.origin})"
        yield kind.finding(node, message, ctx.replace(node, text))
        return


def _bound_root(ctx: Context, node: ast.AST, new: str, origin: str) -> Iterator[Finding]:
    """USR005 where ``new`` reads through a name the file binds to another module."""
    module = new.rpartition(".")[0]
    if module and _rebinds(ctx, module):
        root = new.partition(".")[0]
        meant = ctx.names.bindings[root].qualified + new[len(root) :]
        message = (
            f"{new} calls {meant}: {root} is {ctx.names.bindings[root].qualified} in this file "
            f"({origin}); rename that import if another {root} was meant"
        )
        yield UserRenameBoundRoot.finding(node, message)


def _root_text(node: ast.expr) -> str:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def _called_name(func: ast.expr) -> str | None:
    """The name a call is made by: ``f`` of ``f(...)`` and of ``x.f(...)``."""
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def _calls(ctx: Context, node: ast.Call, function: str) -> bool:
    """Whether the call is of ``function``: its qualified name, or a bare name (msFmkTransplt's
    rules) as the called name, whatever the receiver."""
    if "." not in function:
        return _called_name(node.func) == function
    return ctx.names.qualified_name(node.func) == function


@checks(ast.Call, rules=(UserRenameFunction, UserRenameBoundRoot))
def check_bare_name_call(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    """Calls named by a bare ``old`` (``x.cuda_sync()``, ``cuda_sync()``): the called name changes."""
    assert isinstance(node, ast.Call)
    for rule in ctx.modes.user_rules:
        if isinstance(rule, RenameFunction) and "." not in rule.old and _calls(ctx, node, rule.old):
            func = node.func
            new = rule.new if isinstance(func, ast.Name) else rule.new.rpartition(".")[2]
            if "." in new:
                ctx.state(_UserRulesFile).needed.add(new.rpartition(".")[0])
                yield from _bound_root(ctx, node, new, rule.origin)
            _, end = ctx.span(func)
            edit = Edit(end - len(rule.old), end, new)
            message = f"{rule.old}() -> {new}() ({rule.origin})"
            yield UserRenameFunction.finding(node, message, edit)
            return


@checks(ast.Call, rules=(UserChangeArgument,))
def check_argument(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    for rule in ctx.modes.user_rules:
        if isinstance(rule, ChangeArgument) and _calls(ctx, node, rule.function):
            found = _change_argument(ctx, node, rule)
            if found is not None:
                yield found


def _change_argument(ctx: Context, node: ast.Call, rule: ChangeArgument) -> Finding | None:
    arguments: list[ast.expr | ast.keyword] = [*node.args, *node.keywords]
    arguments.sort(key=lambda a: (a.lineno, a.col_offset))
    target: ast.expr | ast.keyword | None = next(
        (k for k in node.keywords if rule.keyword is not None and k.arg == rule.keyword), None
    )
    if (
        target is None
        and rule.position is not None
        and rule.position < len(node.args)
        and not any(isinstance(a, ast.Starred) for a in node.args[: rule.position + 1])
    ):
        target = node.args[rule.position]
    message = f"{rule.function}: {{}} ({rule.origin})"
    if target is None:
        if rule.value is None or rule.keyword is None:
            return None
        text = f"{rule.keyword}={rule.value}"
        if arguments:
            at = ctx.span(arguments[-1])[1]
            edit = Edit(at, at, ", " + text)
        else:
            at = ctx.source.text.index("(", ctx.span(node.func)[1]) + 1
            edit = Edit(at, at, text)
        return UserChangeArgument.finding(node, message.format(f"add {text}"), edit)
    value_node = target.value if isinstance(target, ast.keyword) else target
    if rule.value is not None:
        if ctx.segment(value_node) == rule.value:
            return None
        edit = ctx.replace(value_node, rule.value)
        return UserChangeArgument.finding(node, message.format(f"set to {rule.value}"), edit)
    index = arguments.index(target)
    if index > 0:
        start, end = ctx.span(arguments[index - 1])[1], ctx.span(target)[1]
    elif len(arguments) > 1:
        start, end = ctx.span(target)[0], ctx.span(arguments[1])[0]
    else:
        start, end = ctx.span(target)
    label = rule.keyword if isinstance(target, ast.keyword) else f"argument {rule.position}"
    return UserChangeArgument.finding(node, message.format(f"remove {label}"), Edit(start, end, ""))


@finishes(rules=(UserImport,))
def insert_imports(
    ctx: Context, module: ast.Module, findings: list[Finding]
) -> Iterator[Insertion]:
    state = ctx.state(_UserRulesFile)
    needed = sorted(
        name for name in state.needed - state.imported if name and not _rebinds(ctx, name)
    )
    if needed and any(f.rule.mode is USER_RULES and f.edit for f in findings):
        yield Insertion(UserImport, tuple(Import(name) for name in needed))


def _rebinds(ctx: Context, module: str) -> bool:
    """Whether ``import module`` would rebind a name the file gives another module
    (``import mylib as AA``: ``import AA.BB`` would replace it, and the new name already reads
    through the file's own ``AA``)."""
    root = module.partition(".")[0]
    binding = ctx.names.bindings.get(root)
    return binding is not None and binding.qualified != root
