"""``-s/--specify-device``: the process runs on the device named by the ``DEVICE_ID`` variable."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascendify.migrate._imports import Import, Insertion, Insertions, first_import_of
from ascendify.migrate._modes import EVERY_TARGET, Target
from ascendify.migrate._rule import (
    Context,
    Edit,
    Finding,
    Mode,
    Operation,
    Rule,
    Switch,
    checks,
    finishes,
)
from ascendify.targets import Safety
from ascendify.targets.portable import HELPER_MODULE

_SET_DEVICE = frozenset(
    {"torch.cuda.set_device", "torch.npu.set_device", "torch_npu.npu.set_device"}
)
_DEVICE_ID = "DEVICE_ID"
_MOVES = frozenset({"cuda", "npu"})
SPECIFY_DEVICE = Mode(
    "specify-device",
    rank=3,
    visits_everything=True,
    switch=Switch(
        ("-s", "--specify-device"),
        "take the device index from the DEVICE_ID environment variable",
    ),
)


class SpecifyDeviceRule(Rule):
    """Base of the rules of ``-s/--specify-device``."""

    mode = SPECIFY_DEVICE
    targets = EVERY_TARGET


class DeviceFromEnvironment(SpecifyDeviceRule):
    """What it does: inserts, after the imports of every file that imports torch,
    ``DEVICE_ID = int(os.environ.get("DEVICE_ID", "0"))`` and a ``set_device(DEVICE_ID)`` call
    (``torch_npu.npu.set_device``; portable: ``portable_device.set_device``).

    Why: Ascend jobs name the card of a process in ``DEVICE_ID``; devices without an index
    (``"npu"``, ``.npu()``) then resolve to it.

    Example: ``import torch`` is followed by the two lines above.

    Fix safety: safe. Explicit indices in device strings (``"cuda:1"``) are kept.
    """

    code = "SDV001"
    name = "device-from-environment"
    summary = "device index from DEVICE_ID"
    safety = Safety.SAFE
    operation = Operation.INSERT


class SetDeviceFromEnvironment(SpecifyDeviceRule):
    """What it does: passes ``DEVICE_ID`` to the script's own ``set_device`` calls.

    Why: a hard-coded or rank-derived index would override the device the job assigned.

    Example: ``torch.cuda.set_device(args.gpu)`` becomes ``torch_npu.npu.set_device(DEVICE_ID)``.

    Fix safety: safe.
    """

    code = "SDV002"
    name = "set-device-from-environment"
    summary = "set_device(...) -> set_device(DEVICE_ID)"
    safety = Safety.SAFE


@finishes(rules=(DeviceFromEnvironment,))
def insert_device_id(
    ctx: Context, module: ast.Module, findings: list[Finding]
) -> Iterator[Insertion]:
    if first_import_of(module, "torch") is None:
        return
    requested = ctx.state(Insertions).requested
    if f"{_DEVICE_ID} = int(" in ctx.source.text or any(
        line.startswith(f"{_DEVICE_ID} = int(") for earlier in requested for line in earlier.code
    ):
        return  # already there (a second run, or the distributed prelude)
    portable = ctx.modes.target is Target.PORTABLE
    device_module = HELPER_MODULE if portable else "torch_npu"
    set_device = f"{HELPER_MODULE}.set_device" if portable else "torch_npu.npu.set_device"
    code = (
        f'{_DEVICE_ID} = int(os.environ.get("{_DEVICE_ID}", "0"))  # the device of this process',
        f"{set_device}({_DEVICE_ID})",
    )
    yield Insertion(
        DeviceFromEnvironment,
        (Import("os"), Import(device_module)),
        code,
        message=f"device from {_DEVICE_ID}",
    )


@checks(ast.Call, rules=(SetDeviceFromEnvironment,))
def check_set_device(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    if ctx.names.qualified_name(node.func) not in _SET_DEVICE or len(node.args) != 1:
        return
    argument = node.args[0]
    if isinstance(argument, ast.Name) and argument.id == _DEVICE_ID:
        return
    yield SetDeviceFromEnvironment.finding(
        node, f"set_device({ctx.segment(argument)}) -> set_device({_DEVICE_ID})",
        ctx.replace(argument, _DEVICE_ID),
    )  # fmt: skip


class MoveWithoutIndex(SpecifyDeviceRule):
    """What it does: drops the device index of ``x.cuda(i)`` (``x.npu(i)``), keeping the other
    arguments (portable: ``x.to(portable_device.device())``, by PRT201).

    Why: with the device set from ``DEVICE_ID``, an index (often ``args.gpu``, 0 by default)
    would send the data to another card.

    Example: ``images = images.cuda(args.gpu, non_blocking=True)`` becomes
    ``images = images.npu(non_blocking=True)``.

    Fix safety: safe.
    """

    code = "SDV003"
    name = "move-without-index"
    summary = ".cuda(i) -> .cuda() (the DEVICE_ID device)"
    safety = Safety.SAFE
    targets = frozenset({Target.NPU})


@checks(ast.Call, rules=(MoveWithoutIndex,))
def check_move_index(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    func = node.func
    if not (
        isinstance(func, ast.Attribute)
        and func.attr in _MOVES
        and ctx.names.qualified_name(func.value) is None
        and not any(isinstance(arg, ast.Starred) for arg in node.args)
    ):
        return
    arguments: list[ast.expr | ast.keyword] = [*node.args, *node.keywords]
    index: ast.expr | ast.keyword | None = (
        node.args[0] if node.args else next((k for k in node.keywords if k.arg == "device"), None)
    )
    if index is None:
        return
    position = arguments.index(index)
    start, end = ctx.span(index)
    if position + 1 < len(arguments):
        end = ctx.span(arguments[position + 1])[0]
    elif position > 0:
        start = ctx.span(arguments[position - 1])[1]
    yield MoveWithoutIndex.finding(
        node, f"{ctx.segment(index)} dropped from .{func.attr}()", Edit(start, end, "")
    )
