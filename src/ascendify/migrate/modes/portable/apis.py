"""The portable target's rewrites of ``torch.cuda`` APIs, amp calls, ``.cuda()``/``.is_cuda``, device
indexes and DDP device ids, and the ``import portable_device`` they need."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from ascendify.migrate._imports import Import, Insertion, local_name_of
from ascendify.migrate._rule import Context, Edit, Finding, checks, finishes
from ascendify.migrate.modes.portable.guards import file_guards
from ascendify.migrate.modes.portable.rules import (
    ImportPortableDevice,
    PortableAmpDevice,
    PortableAmpPositional,
    PortableApi,
    PortableApiUnsupported,
    PortableCudaMethod,
    PortableDeviceIds,
    PortableDeviceIndex,
    PortableGuardKept,
    PortableIsCuda,
)
from ascendify.migrate.modes.specify_device import SPECIFY_DEVICE
from ascendify.migrate.rules._own import is_own_member
from ascendify.migrate.rules.devices import device_index
from ascendify.migrate.rules.methods import is_chosen_method
from ascendify.targets.devices import CUDA_DEFAULT_DEVICE_CALLS
from ascendify.targets.portable import (
    HELPER_DEVICE,
    HELPER_DEVICE_IDS,
    HELPER_DEVICE_TYPE,
    HELPER_FORK_RNG,
    HELPER_MODULE,
    HELPER_MODULE_OBJECT,
    HELPER_SEED_RNG_STATE,
    LEGACY_TENSOR_DTYPES,
    module_member,
    portable_target,
)

_AUTOCAST_POSITIONS = ("enabled", "dtype", "cache_enabled")  # torch.cuda.amp.autocast's order
_AMP_DEVICE_FIRST = frozenset(
    {
        "torch.cuda.amp.autocast",
        "torch.cuda.amp.GradScaler",
        "torch.cuda.amp.autocast_mode.autocast",
        "torch.cuda.amp.grad_scaler.GradScaler",
    }
)
_DDP = "torch.nn.parallel.DistributedDataParallel"
_FORK_RNG = "torch.random.fork_rng"


@dataclass
class _PortableFile:
    """What the portable rules work out for one file."""

    # local name -> what a rewritten import binds it to (its uses then need no edit)
    moved: dict[str, str] = field(default_factory=dict)
    needs_torch: bool = False  # a rewrite spells "torch." where the file binds no such name


def _spell(ctx: Context, qualified: str) -> str:
    """Source text naming ``qualified`` in this file (``th.accelerator...`` after ``import torch as th``)."""
    if qualified.startswith("torch."):
        local = local_name_of(ctx, "torch")
        if local is None:
            ctx.state(_PortableFile).needs_torch = True
        return (local or "torch") + qualified[len("torch") :]
    return qualified


# --- torch.cuda names -------------------------------------------------------------------------


@checks(ast.Name, ast.Attribute, rules=(PortableApi, PortableApiUnsupported, PortableGuardKept))
def check_cuda_name(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    if isinstance(parent, ast.Attribute) and parent.value is node:
        return
    assert isinstance(node, ast.Name | ast.Attribute)
    resolved = ctx.names.resolve(node)
    if resolved is None:
        return
    binding, rest = resolved
    qualified = ".".join([binding.qualified, *rest])
    if qualified == "torch.cuda" and _is_module_value(node, parent):
        # mod = torch.cuda if gpu else torch.cpu: the host's device module (torch.cpu without one)
        message = f"torch.cuda -> {HELPER_MODULE_OBJECT}"
        yield PortableApi.finding(node, message, ctx.replace(node, HELPER_MODULE_OBJECT))
        return
    found = portable_target(qualified)
    if found is None:
        return
    target, tail = found
    guards = file_guards(ctx)
    if target.portable is None:
        member = module_member(qualified, ctx.facts)
        if member is not None and guards.holds(ctx.nodes, node) and isinstance(node.ctx, ast.Load):
            message = f"{qualified} -> {member} (inside a check that an accelerator is present)"
            yield PortableApi.finding(node, message, ctx.replace(node, member))
            return
        note = f": {target.note}" if target.note else ""
        yield PortableApiUnsupported.finding(node, f"{qualified} is not portable{note}")
        return
    if id(node) in guards.kept:
        message = f"{qualified}() kept: {guards.kept[id(node)]}, which runs on CUDA only"
        yield PortableGuardKept.finding(node, message + guards.fallback.get(id(node), ""))
        uses = guards.split.get(id(node), [])
        widened = _spell(ctx, target.portable) + "()" if uses else ""  # spelled: torch is needed
        for use in uses:
            message = f"{ctx.segment(use)} -> {widened} where it guards no CUDA-only call"
            yield PortableApi.finding(use, message, ctx.replace(use, widened))
        return
    if not isinstance(node.ctx, ast.Load):
        return
    legacy = _legacy_type_use(ctx, node, parent, qualified)
    if legacy is not None:
        yield legacy
        return
    local = node.id if isinstance(node, ast.Name) else _root(node)
    new = target.portable + tail
    if qualified in _SEEDS and _saves_rng_state(ctx, node):
        new = HELPER_SEED_RNG_STATE  # an RNG tracker seeds the state it saved: the CPU's too
    current = ctx.state(_PortableFile).moved.get(local, binding.qualified)
    spelled_now = ".".join([current, *rest])
    if spelled_now == new:
        return
    text = local + new[len(current) :] if new.startswith(current + ".") else _spell(ctx, new)
    yield PortableApi.finding(node, f"{qualified} -> {new}", ctx.replace(node, text))


_SEEDS = frozenset({"torch.cuda.manual_seed", "torch.cuda.random.manual_seed"})
_STATE_READS = frozenset({"torch.cuda.get_rng_state", "torch.cuda.random.get_rng_state"})


def _saves_rng_state(ctx: Context, node: ast.AST) -> bool:
    """Whether the function around ``node`` reads the CUDA RNG state (``orig =
    torch.cuda.get_rng_state(); torch.cuda.manual_seed(seed); named = torch.cuda.get_rng_state()``):
    the seed then makes a state to keep, which must be the generator's in use, the CPU's included."""
    index = ctx.nodes
    scope = index.scopes[index.number(node)]
    if scope == 0:
        return False  # the module's own statements: a seed for the whole program
    return any(
        isinstance(inner, ast.Name | ast.Attribute)
        and ctx.names.qualified_name(inner) in _STATE_READS
        for inner in (index.nodes[n] for n in range(scope, index.last[scope] + 1))
    )


def _is_module_value(node: ast.AST, parent: ast.AST | None) -> bool:
    """``torch.cuda`` read as a value, not the alias ``CD = torch.cuda`` the file's names follow."""
    alias = isinstance(parent, ast.Assign) and all(isinstance(t, ast.Name) for t in parent.targets)
    return isinstance(getattr(node, "ctx", None), ast.Load) and not alias and parent is not None


def _legacy_type_use(
    ctx: Context, node: ast.expr, parent: ast.AST | None, qualified: str
) -> Finding | None:
    """``x.type(torch.cuda.FloatTensor)`` and ``isinstance(x, torch.cuda.FloatTensor)``: the
    portable constructor is a function, not a type, so the whole call is spelled out."""
    _, _, name = qualified.rpartition(".")
    dtype = LEGACY_TENSOR_DTYPES.get(name)
    if dtype is None or qualified != f"torch.cuda.{name}":
        return None
    torch = _spell(ctx, "torch")
    if not (isinstance(parent, ast.Call) and parent.func is node):
        # Tensor = torch.cuda.FloatTensor: a value that may reach .type() or isinstance, so it
        # must stay a type: the device module's own legacy type, the CPU one without accelerator.
        text = f'getattr({HELPER_MODULE}.module(), "{name}", {torch}.{name})'
        if not _is_type_or_isinstance_argument(parent, node):
            return PortableApi.finding(node, f"{qualified} -> {text}", ctx.replace(node, text))
    if not isinstance(parent, ast.Call) or parent.keywords:
        return None
    func = parent.func
    if isinstance(func, ast.Attribute) and func.attr == "type" and parent.args == [node]:
        _, value_end = ctx.span(func.value)
        _, end = ctx.span(parent)
        text = f".to({HELPER_DEVICE}(), {torch}.{dtype})"
        return PortableApi.finding(
            node, f".type({qualified}) -> {text}", Edit(value_end, end, text)
        )
    if (
        isinstance(func, ast.Name)
        and func.id == "isinstance"
        and len(parent.args) == 2
        and parent.args[1] is node
    ):
        value = ctx.segment(parent.args[0])
        text = (
            f"(isinstance({value}, {torch}.Tensor) and {value}.dtype == {torch}.{dtype} "
            f'and {value}.device.type != "cpu")'
        )
        return PortableApi.finding(
            node, f"isinstance(..., {qualified}) -> {text}", ctx.replace(parent, text)
        )
    return None


def _is_type_or_isinstance_argument(parent: ast.AST | None, node: ast.expr) -> bool:
    if not isinstance(parent, ast.Call):
        return False
    func = parent.func
    if isinstance(func, ast.Attribute) and func.attr == "type":
        return parent.args == [node]
    return isinstance(func, ast.Name) and func.id == "isinstance" and parent.args[1:] == [node]


def _root(node: ast.expr) -> str:
    while isinstance(node, ast.Attribute):
        node = node.value
    assert isinstance(node, ast.Name)
    return node.id


@checks(ast.ImportFrom, ast.Import, rules=(PortableApi,))
def check_amp_import(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    """``from torch.cuda.amp import autocast`` / ``from torch.cuda import amp`` -> torch.amp."""
    if isinstance(node, ast.ImportFrom) and node.level == 0:
        if node.module == "torch.cuda.amp" and all(
            f"torch.cuda.amp.{alias.name}" in _AMP_DEVICE_FIRST for alias in node.names
        ):
            yield from _move_import(ctx, node, "torch.cuda.amp", "torch.amp")
        elif node.module == "torch.cuda" and [a.name for a in node.names] == ["amp"]:
            yield from _move_import(ctx, node, "torch.cuda", "torch")
        else:
            yield from _import_portable_names(ctx, node)
    elif (
        isinstance(node, ast.Import)
        and len(node.names) == 1
        and node.names[0].name == "torch.cuda.amp"
        and node.names[0].asname
    ):
        yield from _move_import(ctx, node, "torch.cuda.amp", "torch.amp")


# Names whose uses a CUDA check may keep as written (PRT105): their import must keep binding them.
_MAY_BE_KEPT = frozenset({"torch.cuda.is_available", "torch.cuda.device_count"})


def _import_portable_names(ctx: Context, node: ast.ImportFrom) -> Iterator[Finding]:
    """``from torch.cuda import Event, _lazy_call`` -> ``from portable_device import Event,
    lazy_call as _lazy_call`` where every name has a portable spelling in one module (the uses
    then need no edit, and a module re-exporting them exports the portable ones)."""
    if not (node.module or "").startswith("torch.cuda"):
        return
    portable: list[tuple[str, str, str]] = []  # (module, name, local)
    for alias in node.names:
        qualified = f"{node.module}.{alias.name}"
        if qualified in _MAY_BE_KEPT:
            return
        found = portable_target(qualified)
        spelled = found[0].portable if found is not None and not found[1] else None
        if spelled is None or not all(part.isidentifier() for part in spelled.split(".")):
            return  # reported (PRT102), a call or an expression: the uses are rewritten alone
        module, _, name = spelled.rpartition(".")
        portable.append((module, name, alias.asname or alias.name))
    modules = {module for module, _, _ in portable}
    if len(modules) != 1:
        return
    (module,) = modules
    names = ", ".join(
        name if name == local else f"{name} as {local}" for _, name, local in portable
    )
    for _, name, local in portable:
        ctx.state(_PortableFile).moved[local] = f"{module}.{name}"
    text = f"from {module} import {names}"
    yield PortableApi.finding(
        node, f"import from {node.module} -> {module}", ctx.replace(node, text)
    )


def _move_import(
    ctx: Context, node: ast.Import | ast.ImportFrom, old: str, new: str
) -> Iterator[Finding]:
    start, end = ctx.span(node)
    text = ctx.source.text[start:end]
    at = text.find(old)
    if at < 0:
        return  # spelled with spaces or continuations: the uses are rewritten one by one
    for alias in node.names:
        local = alias.asname or alias.name
        bound = f"{old}.{alias.name}" if isinstance(node, ast.ImportFrom) else old
        ctx.state(_PortableFile).moved[local] = new + bound[len(old) :]
    edit = Edit(start + at, start + at + len(old), new)
    yield PortableApi.finding(node, f"import from {old} -> {new}", edit)


# --- amp calls --------------------------------------------------------------------------------


@checks(ast.Call, rules=(PortableAmpDevice, PortableAmpPositional))
def check_amp_call(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    qualified = ctx.names.qualified_name(node.func)
    if qualified == _FORK_RNG:
        # torch.cpu has no RNG state: fork_rng(device_type="cpu") raises on a host without one.
        message = f"{qualified}(...) -> {HELPER_FORK_RNG}(...): the host's device, else the CPU's"
        yield PortableAmpDevice.finding(node, message, ctx.replace(node.func, HELPER_FORK_RNG))
        return
    if qualified in CUDA_DEFAULT_DEVICE_CALLS:
        yield from _default_device(ctx, node, qualified)
        return
    if qualified not in _AMP_DEVICE_FIRST:
        return
    if qualified.endswith("autocast") and node.args:
        yield from _autocast_by_keyword(ctx, node, qualified)
        return
    _, func_end = ctx.span(node.func)
    paren = ctx.source.text.index("(", func_end) + 1
    separator = ", " if node.args or node.keywords else ""
    edit = Edit(paren, paren, HELPER_DEVICE_TYPE + separator)
    yield PortableAmpDevice.finding(node, f"{qualified}(...) gets the host's device type", edit)


def _default_device(ctx: Context, node: ast.Call, qualified: str) -> Iterator[Finding]:
    """``torch.amp.GradScaler()`` defaults to CUDA: name the host's device type by keyword."""
    keyword, position = CUDA_DEFAULT_DEVICE_CALLS[qualified]
    if len(node.args) > position or any(k.arg in (keyword, None) for k in node.keywords):
        return
    if any(isinstance(arg, ast.Starred) for arg in node.args):
        return
    text = f"{keyword}={HELPER_DEVICE_TYPE}"
    arguments = [*node.args, *node.keywords]
    if arguments:
        at = max(ctx.span(argument)[1] for argument in arguments)
        edit = Edit(at, at, ", " + text)
    else:
        at = ctx.source.text.index("(", ctx.span(node.func)[1]) + 1
        edit = Edit(at, at, text)
    yield PortableAmpDevice.finding(node, f"{qualified}(...) gets {text}", edit)


def _autocast_by_keyword(ctx: Context, node: ast.Call, qualified: str) -> Iterator[Finding]:
    """``autocast(True)`` -> ``autocast(<device type>, enabled=True)``: torch.amp's order differs."""
    starred = any(isinstance(arg, ast.Starred) for arg in node.args)
    if starred or len(node.args) > len(_AUTOCAST_POSITIONS):
        yield PortableAmpPositional.finding(node, "autocast with *args: pass them by keyword")
        return
    named = [
        f"{name}={ctx.segment(arg)}"
        for name, arg in zip(_AUTOCAST_POSITIONS, node.args, strict=False)
    ]
    arguments = [HELPER_DEVICE_TYPE, *named, *(ctx.segment(k) for k in node.keywords)]
    _, func_end = ctx.span(node.func)
    start = ctx.source.text.index("(", func_end)
    _, end = ctx.span(node)
    edit = Edit(start, end, "(" + ", ".join(arguments) + ")")
    yield PortableAmpDevice.finding(node, f"{qualified}(...) gets the host's device type", edit)


# --- .cuda() and .is_cuda ---------------------------------------------------------------------


@checks(ast.Call, rules=(PortableCudaMethod,))
def check_cuda_method(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    func = node.func
    if not (
        isinstance(func, ast.Attribute)
        and func.attr == "cuda"
        and ctx.names.qualified_name(func.value) is None
        and not is_own_member(ctx, func)
    ) or any(isinstance(arg, ast.Starred) for arg in node.args):
        return
    device_args: list[ast.AST] = list(node.args[:1])
    others: list[list[str | ast.AST]] = []
    for keyword in node.keywords:
        if keyword.arg == "device":
            device_args = [keyword.value]
        else:
            others.append([keyword])
    if len(node.args) > 1:
        others.insert(0, ["non_blocking=", node.args[1]])
    if ctx.modes.has(SPECIFY_DEVICE):
        device_args = []  # the device set from DEVICE_ID, not the index written here
    # The arguments are kept as written, so CUDA calls inside them are migrated in this pass.
    pieces: list[str | ast.AST] = ["to(", f"{HELPER_DEVICE}(", *device_args, ")"]
    for other in others:
        pieces += [", ", *other]
    _, end = ctx.span(node)
    _, func_end = ctx.span(func)
    edit = ctx.compose(func_end - len("cuda"), end, [*pieces, ")"])
    yield PortableCudaMethod.finding(node, f".cuda() -> .to({HELPER_DEVICE}(...))", edit)


@checks(ast.Attribute, rules=(PortableIsCuda, PortableCudaMethod))
def check_is_cuda(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Attribute)
    if node.attr == "is_cuda" and isinstance(node.ctx, ast.Load) and not is_own_member(ctx, node):
        text = f'({ctx.segment(node.value)}.device.type != "cpu")'
        yield PortableIsCuda.finding(
            node, ".is_cuda -> on-accelerator test", ctx.replace(node, text)
        )
    elif (
        is_chosen_method(node, parent)
        and ctx.names.qualified_name(node.value) is None
        and not is_own_member(ctx, node)
    ):
        # (x.cuda if gpu else x.cpu)(...): a callable that moves x to the host's device.
        target = ctx.segment(node.value)
        text = f"(lambda *args, **kwargs: {target}.to({HELPER_DEVICE}(*args[:1]), **kwargs))"
        yield PortableCudaMethod.finding(node, f".cuda -> {text}", ctx.replace(node, text))


@checks(ast.Call, rules=(PortableDeviceIndex,))
def check_device_index(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    index = device_index(node)
    if index is not None:
        text = f"{HELPER_DEVICE}({ctx.segment(index)})"
        yield PortableDeviceIndex.finding(
            index, f"device index -> {text}", ctx.replace(index, text)
        )


# --- DDP device ids ---------------------------------------------------------------------------


@checks(ast.Call, rules=(PortableDeviceIds,))
def check_ddp_device_ids(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    if ctx.names.qualified_name(node.func) != _DDP:
        return
    values = [arg for index, arg in enumerate(node.args) if index in (1, 2)]
    values += [k.value for k in node.keywords if k.arg in ("device_ids", "output_device")]
    for value in values:
        if (isinstance(value, ast.Constant) and value.value is None) or (
            isinstance(value, ast.Call)
            and ctx.names.qualified_name(value.func) == HELPER_DEVICE_IDS
        ):
            continue
        text = f"{HELPER_DEVICE_IDS}({ctx.segment(value)})"
        yield PortableDeviceIds.finding(
            value, "DDP device ids -> None on CPU hosts", ctx.replace(value, text)
        )


# --- the helper import ------------------------------------------------------------------------


@finishes(rules=(ImportPortableDevice,))
def insert_helper_import(
    ctx: Context, module: ast.Module, findings: list[Finding]
) -> Iterator[Insertion]:
    imports = []
    if ctx.state(_PortableFile).needs_torch and any(f.rule is PortableApi for f in findings):
        imports.append(Import("torch"))
    if any(f.edit is not None and f"{HELPER_MODULE}." in f.edit.replacement for f in findings):
        imports.append(Import(HELPER_MODULE))
    if imports:
        yield Insertion(ImportPortableDevice, tuple(imports))
