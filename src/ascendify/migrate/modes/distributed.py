"""``distributed -m MAIN.py -t MODEL``: a single-card script becomes one process per card.

The main file joins the process group from the launcher's environment (torch's RANK/WORLD_SIZE/
LOCAL_RANK, else Ascend's RANK_ID/RANK_SIZE/DEVICE_ID); data loaders get a DistributedSampler and
``set_epoch`` in epoch loops; the model is wrapped in DistributedDataParallel once it is on its device;
state-dict calls go through the unwrapped module so checkpoint keys stay those of one card.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ascendify._fs import write_bytes
from ascendify.migrate._imports import Import, Insertion, local_name_of
from ascendify.migrate._modes import EVERY_TARGET, DistributedMode, Modes, Target
from ascendify.migrate._rule import (
    Context,
    Edit,
    Extras,
    Finding,
    Mode,
    Operation,
    Rule,
    checks,
    finishes,
)
from ascendify.migrate._tree import TreeResult
from ascendify.targets import Safety
from ascendify.targets.portable import HELPER_MODULE

_DATA_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
_DDP = "torch.nn.parallel.DistributedDataParallel"
_SAMPLER = "utils.data.distributed.DistributedSampler"  # after the torch name
_MOVES = frozenset({"to", "cuda", "npu"})
_STATE_METHODS = frozenset({"state_dict", "load_state_dict"})
_LOADER_HINT = "loader"
LAUNCHER = "run_distributed_npu.sh"


def _write_launcher(modes: Modes, result: TreeResult, directory: Path) -> list[str]:
    """The script that starts the main file once per card."""
    assert modes.distributed is not None  # the mode is on
    script = distributed_script(modes.distributed.main).encode()
    write_bytes(directory / LAUNCHER, script, directory, 0o750)
    return [LAUNCHER]


DISTRIBUTED = Mode(
    "distributed",
    rank=2,
    visits_everything=True,
    when=lambda modes: modes.distributed is not None,
    extras=Extras(reserves=frozenset({LAUNCHER}), write=_write_launcher),
)


class DistributedRule(Rule):
    """Base of the rules of ``distributed`` (single card -> one process per card)."""

    mode = DISTRIBUTED
    targets = EVERY_TARGET


@dataclass
class _DistributedFile:
    """What the distributed rules work out for one file."""

    needs_torch: bool = False  # inserted code spells "torch." where the file binds no such name
    loaders: set[str] | None = None  # source text of the targets assigned a DataLoader
    # source text of the names holding loaders by key ({"train": DataLoader(...)}, d[k] = DataLoader)
    loader_dicts: set[str] = field(default_factory=set)


class InitProcessGroup(DistributedRule):
    """What it does: inserts, after the main file's imports, the process-group start: rank, world
    size and local rank from the launcher's environment (RANK/WORLD_SIZE/LOCAL_RANK, else
    RANK_ID/RANK_SIZE/DEVICE_ID), the device of this process, and
    ``init_process_group("hccl")`` (portable: the backend of the host's device), plus an exit
    hook that leaves the group together with the other ranks.

    Why: each card runs its own process; they must find each other before DDP can start.

    Example: ``import torch`` is followed by ``RANK_ID = int(os.environ.get("RANK", ...))`` ...
    ``torch.distributed.init_process_group("hccl", rank=RANK_ID, world_size=RANK_SIZE)``.

    Fix safety: safe.
    """

    code = "DST001"
    name = "init-process-group"
    summary = "start the process group from the launcher's environment (main file)"
    safety = Safety.SAFE
    operation = Operation.INSERT


class DistributedSampler(DistributedRule):
    """What it does: gives every ``DataLoader`` a ``DistributedSampler`` over its dataset, moving
    ``shuffle=`` into the sampler.

    Why: without it every card trains on the whole dataset.

    Example: ``DataLoader(train_set, batch_size=32, shuffle=True)`` becomes
    ``DataLoader(train_set, batch_size=32, sampler=torch.utils.data.distributed.DistributedSampler(train_set, shuffle=True))``.

    Fix safety: unsafe: every loader is sharded, validation loaders too (metrics then cover one
    shard per card). Loaders with their own sampler, or whose dataset is an expression, are reported.
    """

    code = "DST101"
    name = "distributed-sampler"
    summary = "DataLoader -> DistributedSampler"
    safety = Safety.UNSAFE


class SamplerNotAdded(DistributedRule):
    """What it does: reports a DataLoader left as it is: it has its own sampler, its dataset is not a
    plain name, or ``shuffle`` is positional.

    Why: such loaders need a human decision about sharding.

    Example: ``DataLoader(make_set(), sampler=weighted)`` is reported.

    Fix safety: report only.
    """

    code = "DST102"
    name = "sampler-not-added"
    summary = "DataLoader not sharded (left in place)"
    safety = Safety.REPORT_ONLY
    operation = Operation.ADVICE


class SetEpoch(DistributedRule):
    """What it does: inserts ``loader.sampler.set_epoch(epoch)`` (guarded by an isinstance test) at
    the top of ``for epoch in ...`` loops, for every loader the loop uses (names containing
    ``loader``, or assigned from a DataLoader in the file); for a dict of loaders, for each of its
    values (a dict has no sampler: its guard never fired).

    Why: a DistributedSampler shuffles the same way every epoch unless told the epoch.

    Example: ``for epoch in range(10):`` gains
    ``if isinstance(train_loader.sampler, torch.utils.data.distributed.DistributedSampler):``
    ``train_loader.sampler.set_epoch(epoch)``.

    Fix safety: safe.
    """

    code = "DST103"
    name = "set-epoch"
    summary = "sampler.set_epoch(epoch) in epoch loops"
    safety = Safety.SAFE
    operation = Operation.INSERT


class WrapModel(DistributedRule):
    """What it does: wraps the model variable (``-t``, default ``model``) in
    ``DistributedDataParallel`` right after the last statement that creates it, moves it to its
    device or rebinds it in a block (``if args.amp: model, optimizer = amp.initialize(...)``),
    unless the file already wraps it.

    Why: DDP averages the gradients of all cards, so every process keeps the same weights.

    Example: after ``model = Net().cuda()`` comes
    ``model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[...])``.

    Fix safety: safe.
    """

    code = "DST201"
    name = "wrap-model"
    summary = "model -> DistributedDataParallel after it is on its device"
    safety = Safety.SAFE
    operation = Operation.INSERT


class UnwrappedStateDict(DistributedRule):
    """What it does: reads and loads state dicts through the unwrapped module:
    ``model.state_dict()`` becomes ``getattr(model, "module", model).state_dict()`` (same for
    ``load_state_dict``).

    Why: DDP prefixes every key with ``module.``; checkpoints would no longer load into a
    single-card model, and single-card checkpoints would not load into the wrapped one.

    Example: ``torch.save(model.state_dict(), path)`` becomes
    ``torch.save(getattr(model, "module", model).state_dict(), path)``.

    Fix safety: safe (the expression is the model itself before wrapping).
    """

    code = "DST202"
    name = "unwrapped-state-dict"
    summary = "state_dict through the unwrapped module"
    safety = Safety.SAFE


def _options(ctx: Context) -> DistributedMode:
    """The run's ``-m``/``-t`` options (the distributed rules run only where they are given)."""
    options = ctx.modes.distributed
    assert options is not None
    return options


def _torch(ctx: Context) -> str:
    """How this file names torch; "torch" (imported by :func:`insert_torch_import`) if it does not."""
    local = local_name_of(ctx, "torch")
    if local is None:
        ctx.state(_DistributedFile).needs_torch = True
    return local or "torch"


def _is_portable(ctx: Context) -> bool:
    return ctx.modes.target is Target.PORTABLE


# --- the process group ------------------------------------------------------------------------


def _prelude(ctx: Context) -> list[str]:
    torch = _torch(ctx)
    if _is_portable(ctx):
        set_device = f"{HELPER_MODULE}.set_device(DEVICE_ID)"
        backend = f"{HELPER_MODULE}.backend()"
    else:
        set_device = "torch_npu.npu.set_device(DEVICE_ID)"
        backend = '"hccl"'
    return [
        "",
        "# One process per device: rank and device from the launcher (torch's or Ascend's names).",
        'RANK_ID = int(os.environ.get("RANK", os.environ.get("RANK_ID", "0")))',
        'RANK_SIZE = int(os.environ.get("WORLD_SIZE", os.environ.get("RANK_SIZE", "1")))',
        'DEVICE_ID = int(os.environ.get("LOCAL_RANK", os.environ.get("DEVICE_ID", "0")))',
        'os.environ.setdefault("MASTER_ADDR", "127.0.0.1")',
        'os.environ.setdefault("MASTER_PORT", "29688")',
        set_device,
        f"if not {torch}.distributed.is_initialized():",
        f"    {torch}.distributed.init_process_group({backend}, rank=RANK_ID, world_size=RANK_SIZE)",
        "",
        "    def _leave_process_group():",
        "        # Together, at exit: a rank that leaves while others still talk to it may abort.",
        "        # After an uncaught exception it leaves at once (the launcher stops the others).",
        f'        if {torch}.distributed.is_initialized() and not hasattr(sys, "last_value"):',
        f"            {torch}.distributed.barrier(async_op=True).wait(datetime.timedelta(seconds=60))",
        f"            {torch}.distributed.destroy_process_group()",
        "",
        "    atexit.register(_leave_process_group)",
    ]


@finishes(rules=(InitProcessGroup,))
def insert_init(ctx: Context, module: ast.Module, findings: list[Finding]) -> Iterator[Insertion]:
    if ctx.path != _options(ctx).main or "RANK_SIZE = int(" in ctx.source.text:
        return
    device_module = HELPER_MODULE if _is_portable(ctx) else "torch_npu"
    imports = [Import(name) for name in ("atexit", "datetime", "os", "sys", device_module)]
    yield Insertion(
        InitProcessGroup,
        (*imports, Import("torch.distributed")),
        tuple(_prelude(ctx)),
        message="process group from the launcher environment",
    )


# --- data loaders -----------------------------------------------------------------------------


@checks(ast.Call, rules=(DistributedSampler, SamplerNotAdded))
def check_data_loader(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    if ctx.names.qualified_name(node.func) not in _DATA_LOADERS:
        return
    keywords = {keyword.arg: keyword for keyword in node.keywords}
    if "sampler" in keywords or "batch_sampler" in keywords:
        if not _is_distributed_sampler(ctx, keywords.get("sampler")):
            yield SamplerNotAdded.finding(node, "DataLoader has its own sampler: shard it yourself")
        return
    dataset = node.args[0] if node.args else getattr(keywords.get("dataset"), "value", None)
    if not isinstance(dataset, ast.Name | ast.Attribute | ast.Subscript) or len(node.args) > 2:
        yield SamplerNotAdded.finding(
            node, "DataLoader dataset is not a plain name (or shuffle is positional): not sharded"
        )
        return
    shuffle = keywords.get("shuffle")
    shuffle_text = "False" if shuffle is None else ctx.segment(shuffle.value)
    sampler = f"sampler={_torch(ctx)}.{_SAMPLER}({ctx.segment(dataset)}, shuffle={shuffle_text})"
    if shuffle is not None:
        edit = ctx.replace(shuffle, sampler)
    else:
        last = [*node.args, *node.keywords][-1]
        at = ctx.span(last)[1]
        edit = Edit(at, at, ", " + sampler)
    yield DistributedSampler.finding(node, "DataLoader -> DistributedSampler", edit)


def _is_distributed_sampler(ctx: Context, keyword: ast.keyword | None) -> bool:
    return (
        keyword is not None
        and isinstance(keyword.value, ast.Call)
        and (ctx.names.qualified_name(keyword.value.func) or "").endswith("DistributedSampler")
    )


def _loader_names(ctx: Context) -> set[str]:
    """Source text of targets assigned from a DataLoader call anywhere in the file."""
    state = ctx.state(_DistributedFile)
    if state.loaders is not None:
        return state.loaders
    names: set[str] = set()
    for node in ctx.names.assignments:
        if not isinstance(node, ast.Assign):
            continue
        if _is_loader(ctx, node.value):
            names.update(ctx.segment(target) for target in node.targets)
            state.loader_dicts.update(
                ctx.segment(target.value)
                for target in node.targets
                if isinstance(target, ast.Subscript)
            )
        elif _holds_loaders(ctx, node.value):
            state.loader_dicts.update(ctx.segment(target) for target in node.targets)
    state.loaders = names | state.loader_dicts
    return state.loaders


def _is_loader(ctx: Context, value: ast.expr) -> bool:
    return isinstance(value, ast.Call) and ctx.names.qualified_name(value.func) in _DATA_LOADERS


def _holds_loaders(ctx: Context, value: ast.expr) -> bool:
    """``{"train": DataLoader(...), ...}``, ``{k: DataLoader(...) for k in ...}``, ``dict(train=DataLoader(...))``."""
    if isinstance(value, ast.Dict):
        return any(_is_loader(ctx, item) for item in value.values)
    if isinstance(value, ast.DictComp):
        return _is_loader(ctx, value.value)
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "dict"
        and any(_is_loader(ctx, keyword.value) for keyword in value.keywords)
    )


@checks(ast.Module, rules=(SetEpoch,))
def check_epoch_loops(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Module)
    known = _loader_names(ctx)
    index = ctx.nodes
    for loop in map(index.nodes.__getitem__, index.walk_order(index.of(ast.For, ast.AsyncFor))):
        if (
            isinstance(loop, ast.For | ast.AsyncFor)
            and isinstance(loop.target, ast.Name)
            and "epoch" in loop.target.id.lower()
        ):
            yield from _set_epoch(ctx, loop, loop.target.id, known)


def _set_epoch(
    ctx: Context, loop: ast.For | ast.AsyncFor, epoch: str, known: set[str]
) -> Iterator[Finding]:
    used: list[str] = []
    already: set[str] = set()
    for inner in _walk_same_scope(loop.body):
        if isinstance(inner, ast.Name | ast.Attribute) and isinstance(inner.ctx, ast.Load):
            text = ctx.segment(inner)
            last = text.rpartition(".")[2]
            if (text in known or _LOADER_HINT in last.lower()) and text not in used:
                used.append(text)
        if (
            isinstance(inner, ast.Call)
            and isinstance(inner.func, ast.Attribute)
            and inner.func.attr == "set_epoch"
        ):
            already.add(ctx.segment(inner.func.value).removesuffix(".sampler"))
        if (
            isinstance(inner, ast.For)
            and isinstance(inner.iter, ast.Call)
            and isinstance(inner.iter.func, ast.Attribute)
            and inner.iter.func.attr == "values"
            and "set_epoch" in ctx.segment(inner)
        ):  # for _loader in loaders.values(): ... set_epoch(epoch), inserted by an earlier run
            already.add(ctx.segment(inner.iter.func.value))
    first = loop.body[0]
    if first.lineno == loop.lineno:
        return  # "for epoch in r: step()" on one line: no room for a statement
    indent = ctx.source.line(first.lineno)[: first.col_offset]
    unit = "\t" if "\t" in indent else "    "
    newline = ctx.source.newline()
    sampler_class = f"{_torch(ctx)}.{_SAMPLER}"
    dicts = ctx.state(_DistributedFile).loader_dicts
    for loader in used:
        if loader in already or any(loader.startswith(other + ".") for other in used):
            continue
        if loader in dicts:  # the loaders are its values: a dict has no sampler
            text = (
                f"{indent}for _loader in {loader}.values():{newline}"
                f'{indent}{unit}if isinstance(getattr(_loader, "sampler", None), {sampler_class}):'
                f"{newline}{indent}{unit}{unit}_loader.sampler.set_epoch({epoch}){newline}"
            )
        else:
            text = (
                f'{indent}if isinstance(getattr({loader}, "sampler", None), {sampler_class}):'
                f"{newline}{indent}{unit}{loader}.sampler.set_epoch({epoch}){newline}"
            )
        at = ctx.source.offset(first.lineno, 0)
        yield SetEpoch.finding(first, f"{loader}.sampler.set_epoch({epoch})", Edit(at, at, text))


def _walk_same_scope(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node under ``body`` except inside nested functions and classes."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


# --- the model --------------------------------------------------------------------------------


@checks(ast.Module, rules=(WrapModel,))
def check_model(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    mode = _options(ctx)
    assert isinstance(node, ast.Module)
    if _already_wrapped(ctx, mode.model):
        return
    for body in _statement_lists(node):
        last = None
        for stmt in body:
            if _places_model(ctx, stmt, mode.model) or _rebinds_model_inside(ctx, stmt, mode.model):
                last = stmt
        if last is not None:
            yield _wrap_after(ctx, last, mode.model)
            return


def _statement_lists(module: ast.Module) -> Iterator[list[ast.stmt]]:
    stack: list[ast.AST] = [module]
    while stack:
        node = stack.pop()
        for name in ("body", "orelse", "finalbody"):
            children = getattr(node, name, None)
            if children and isinstance(children[0], ast.stmt):
                yield children
                stack.extend(reversed(children))
        if isinstance(node, ast.Try):
            stack.extend(node.handlers)


def _places_model(ctx: Context, stmt: ast.stmt, model: str) -> bool:
    """``model = Net(...)``/``model = model.cuda()`` or ``model.to(device)`` (not ``model = None``)."""
    if isinstance(stmt, ast.Assign) and any(ctx.segment(t) == model for t in stmt.targets):
        value = stmt.value
        if isinstance(value, ast.Constant):
            return False
        return isinstance(value, ast.Call)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        return (
            isinstance(func, ast.Attribute)
            and func.attr in _MOVES
            and ctx.segment(func.value) == model
        )
    return False


def _rebinds_model_inside(ctx: Context, stmt: ast.stmt, model: str) -> bool:
    """A block that rebinds the model from a call, as a conditional
    ``model, optimizer = amp.initialize(model, optimizer)`` does (apex wants amp before DDP)."""
    if not isinstance(stmt, ast.If | ast.With | ast.Try):
        return False
    for inner in ast.walk(stmt):
        if (
            isinstance(inner, ast.Assign)
            and isinstance(inner.value, ast.Call)
            # a DataParallel wrapper is removed (DST204), not something to wrap after
            and not (ctx.names.qualified_name(inner.value.func) or "").endswith("DataParallel")
        ):
            names = [
                element
                for target in inner.targets
                for element in (target.elts if isinstance(target, ast.Tuple) else [target])
            ]
            if any(ctx.segment(name) == model for name in names):
                return True
    return False


def _moves(stmt: ast.stmt) -> bool:
    """Whether the statement ends by putting the model on a device (``x = Net().cuda()``)."""
    value = stmt.value if isinstance(stmt, ast.Assign | ast.Expr) else None
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in _MOVES
    )


def _already_wrapped(ctx: Context, model: str) -> bool:
    index = ctx.nodes
    for node in map(index.nodes.__getitem__, index.of(ast.Call)):
        if isinstance(node, ast.Call) and node.args:
            name = ctx.names.qualified_name(node.func) or ""
            if name.endswith("DistributedDataParallel") and ctx.segment(node.args[0]) == model:
                return True
    return False


def _wrap_after(ctx: Context, stmt: ast.stmt, model: str) -> Finding:
    torch = _torch(ctx)
    if _is_portable(ctx):
        device_ids = f"{HELPER_MODULE}.device_ids([{HELPER_MODULE}.current_device()])"
        move = f"{model}.to({HELPER_MODULE}.device())"
    else:
        device_ids = "[torch_npu.npu.current_device()]"
        move = f"{model}.npu()"
    indent = ctx.source.line(stmt.lineno)[: stmt.col_offset]
    unit = "\t" if "\t" in indent else "    "
    newline = ctx.source.newline()
    lines = [] if _moves(stmt) else [f"{model} = {move}"]
    lines += [
        f"if not isinstance({model}, {torch}.nn.parallel.DistributedDataParallel):",
        f"{unit}{model} = {torch}.nn.parallel.DistributedDataParallel({model}, device_ids={device_ids})",
    ]
    end_line = stmt.end_lineno or stmt.lineno
    at = ctx.source.offset(end_line, 0) + len(ctx.source.line(end_line))
    text = "".join(indent + line + newline for line in lines)
    if not ctx.source.line(end_line).endswith(("\n", "\r")):
        text = newline + text.removesuffix(newline)
    return WrapModel.finding(stmt, f"{model} -> DistributedDataParallel", Edit(at, at, text))


@checks(ast.Call, rules=(UnwrappedStateDict,))
def check_state_dict(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    mode = _options(ctx)
    assert isinstance(node, ast.Call)
    func = node.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr in _STATE_METHODS
        and ctx.segment(func.value) == mode.model
    ):
        text = f'getattr({mode.model}, "module", {mode.model})'
        yield UnwrappedStateDict.finding(
            node, f"{mode.model}.{func.attr} -> unwrapped module", ctx.replace(func.value, text)
        )


class SaveOnRankZero(DistributedRule):
    """What it does: runs ``torch.save(...)`` statements on rank 0 only.

    Why: every rank holds the same weights after DDP; several processes writing one file at once
    can leave it corrupt.

    Example: ``torch.save(model.state_dict(), path)`` becomes
    ``if not torch.distributed.is_initialized() or torch.distributed.get_rank() == 0:`` followed by
    the indented save.

    Fix safety: safe.
    """

    code = "DST203"
    name = "save-on-rank-zero"
    summary = "torch.save on rank 0 only"
    safety = Safety.SAFE
    operation = Operation.INSERT


def _rank_zero(ctx: Context) -> str:
    torch = _torch(ctx)
    return f"not {torch}.distributed.is_initialized() or {torch}.distributed.get_rank() == 0"


@checks(ast.Expr, rules=(SaveOnRankZero,))
def check_save(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Expr)
    call = node.value
    if not isinstance(call, ast.Call) or ctx.names.qualified_name(call.func) != "torch.save":
        return
    condition = _rank_zero(ctx)
    if isinstance(parent, ast.If) and ctx.segment(parent.test) == condition:
        return
    line = ctx.source.line(node.lineno)
    indent = line[: node.col_offset]
    if indent.strip():
        return  # not alone on its line ("x = 1; torch.save(...)")
    unit = "\t" if "\t" in indent else "    "
    at = ctx.source.offset(node.lineno, node.col_offset)
    text = f"if {condition}:{ctx.source.newline()}{indent}{unit}"
    yield SaveOnRankZero.finding(node, "torch.save on rank 0 only", Edit(at, at, text))


class DataParallelRemoved(DistributedRule):
    """What it does: unwraps ``torch.nn.DataParallel(model, ...)`` of the model variable to
    ``model``; DistributedDataParallel takes its place (DST201).

    Why: one process per card replaces single-process data parallelism, and DDP cannot wrap a
    DataParallel module (nor does NPU support DataParallel).

    Example: ``model = nn.DataParallel(model, device_ids=[0, 1])`` becomes ``model = model``,
    followed by the DDP wrap.

    Fix safety: safe.
    """

    code = "DST204"
    name = "data-parallel-removed"
    summary = "DataParallel(model) -> model (DDP wraps it instead)"
    safety = Safety.SAFE


_DATA_PARALLEL = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel"})


@checks(ast.Call, rules=(DataParallelRemoved,))
def check_data_parallel(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    mode = _options(ctx)
    assert isinstance(node, ast.Call)
    if (
        node.args
        and ctx.names.qualified_name(node.func) in _DATA_PARALLEL
        and ctx.segment(node.args[0]) == mode.model
    ):
        yield DataParallelRemoved.finding(
            node, f"DataParallel({mode.model}) -> {mode.model}", ctx.replace(node, mode.model)
        )


class ImportTorch(DistributedRule):
    """What it does: inserts ``import torch`` in a file that the distributed rules made name
    ``torch`` (``torch.nn.parallel.DistributedDataParallel``, ...) but that binds no such name
    (``import torch.nn as nn`` alone).

    Why: the inserted code must run.

    Example: a file with only ``import torch.nn as nn`` gains ``import torch``.

    Fix safety: safe.
    """

    code = "DST002"
    name = "import-torch"
    summary = "insert import torch for the distributed code"
    safety = Safety.SAFE
    operation = Operation.INSERT


@finishes(rules=(ImportTorch,))
def insert_torch_import(
    ctx: Context, module: ast.Module, findings: list[Finding]
) -> Iterator[Insertion]:
    used = any(f.rule.mode is DISTRIBUTED and f.edit is not None for f in findings)
    if used and ctx.state(_DistributedFile).needs_torch:
        yield Insertion(ImportTorch, (Import("torch"),))  # the prelude's torch.distributed is one


def distributed_script(main: str) -> str:
    """A launcher for every card of this host: ``ascendify run`` when installed, else a plain loop."""
    return f"""#!/usr/bin/env bash
# Starts {main} once per device of this host (generated by ascendify migrate distributed).
# Usage: ./{LAUNCHER} [ARGS...]   ARGS go to {main}.
# NPUS=N sets the number of processes (default: the NPUs of this host, else 1); PYTHON picks
# the interpreter. Each rank writes output_npu_<rank>.log next to this script.
set -u
cd "$(dirname "$0")" || exit 2
MAIN={_shell_quote(main)}
PYTHON="${{PYTHON:-python3}}"
if [ -z "${{NPUS:-}}" ]; then
    NPUS=$(ls -1d /dev/davinci[0-9]* 2>/dev/null | wc -l)
    [ "$NPUS" -gt 0 ] || NPUS=1
fi
export PYTHONPATH="$PWD${{PYTHONPATH:+:$PYTHONPATH}}"

if command -v ascendify >/dev/null 2>&1; then
    exec ascendify run --nproc-per-node "$NPUS" "$PYTHON" "$MAIN" "$@"
fi

export MASTER_ADDR="${{MASTER_ADDR:-127.0.0.1}}"
export MASTER_PORT="${{MASTER_PORT:-29688}}"
export HCCL_WHITELIST_DISABLE=1
export RANK_SIZE="$NPUS" WORLD_SIZE="$NPUS" LOCAL_WORLD_SIZE="$NPUS"
pids=()
for ((rank = 0; rank < NPUS; rank++)); do
    echo "starting rank $rank: $PYTHON $MAIN $*"
    RANK_ID=$rank DEVICE_ID=$rank ASCEND_DEVICE_ID=$rank RANK=$rank LOCAL_RANK=$rank \\
        "$PYTHON" "$MAIN" "$@" >"output_npu_$rank.log" 2>&1 &
    pids+=("$!")
done
status=0
for ((done_ranks = 0; done_ranks < NPUS; done_ranks++)); do
    if ! wait -n; then
        status=1
        break
    fi
done
if [ "$status" -ne 0 ]; then
    echo "a rank failed; stopping the others (see output_npu_*.log)" >&2
    kill "${{pids[@]}}" 2>/dev/null
    wait
fi
exit "$status"
"""


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


# --- hard-coded cards -------------------------------------------------------------------------


class RankCard(DistributedRule):
    """What it does: ties a card the script names by number to this process's card:
    ``"cuda:0"`` becomes ``f"npu:{torch_npu.npu.current_device()}"``, and the index of
    ``.cuda(0)``, ``.to(0)``, ``torch.cuda.set_device(0)`` and ``torch.device("cuda", 0)`` becomes
    this process's device (set from the launcher's ``LOCAL_RANK``/``DEVICE_ID`` by DST001).

    Why: every rank would compute on card 0 while DistributedDataParallel is given the rank's
    card: every rank but the first computes on the wrong card, silently.

    Example: ``model = model.cuda(0)`` becomes
    ``model = model.npu(torch_npu.npu.current_device())``.

    Fix safety: unsafe: a script that really means one fixed card for a side job (an evaluation
    model kept apart) now uses the rank's card there too.
    """

    code = "DST205"
    name = "rank-card"
    summary = "hard-coded card number -> this rank's card"
    safety = Safety.UNSAFE
    targets = frozenset({Target.NPU})
    priority = -1  # wins over the default run's "npu:0" of the same literal
    triggers = (b"cuda",)


_CURRENT_CARD = "torch_npu.npu.current_device()"
_CARD_STRING = re.compile(r"cuda:\d+")
_CARD_CALLS = frozenset({"torch.cuda.set_device", "torch.device"})


def _card_index(ctx: Context, node: ast.Call) -> tuple[ast.expr, bool] | None:
    """The literal card number a call is given, and whether it must be a device string."""
    func = node.func
    given = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "device")]
    if isinstance(func, ast.Attribute) and func.attr in ("cuda", "to") and given:
        index, as_string = given[0], func.attr == "to"
    elif ctx.names.qualified_name(func) == "torch.device" and len(node.args) == 2:
        index, as_string = node.args[1], False
    elif ctx.names.qualified_name(func) in _CARD_CALLS and node.args:
        index, as_string = node.args[0], False
    else:
        return None
    if isinstance(index, ast.Constant) and type(index.value) is int:
        return index, as_string
    return None


@checks(ast.Call, ast.Constant, rules=(RankCard,))
def check_rank_card(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    if isinstance(node, ast.Constant):
        card = isinstance(node.value, str) and _CARD_STRING.fullmatch(node.value)
        if card and not isinstance(parent, ast.JoinedStr):
            edit = ctx.replace(node, f'f"npu:{{{_CURRENT_CARD}}}"')
            yield RankCard.finding(node, f"{node.value!r} -> this rank's card", edit)
        return
    assert isinstance(node, ast.Call)
    found = _card_index(ctx, node)
    if found is None:
        return
    index, as_string = found
    text = f'f"npu:{{{_CURRENT_CARD}}}"' if as_string else _CURRENT_CARD
    message = f"card {ctx.segment(index)} -> this rank's card"
    yield RankCard.finding(index, message, ctx.replace(index, text))
