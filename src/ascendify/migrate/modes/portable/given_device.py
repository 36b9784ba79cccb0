"""``--target portable``: a device the program is given at run time (a command-line option, a key of
its configuration) read through the generated helper, which maps ``cuda``/``cuda:N`` to the host's
device: the migrated program accepts the command lines and configurations the original did."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator

from ascendify.migrate._rule import Context, Finding, checks
from ascendify.migrate.modes.portable.mode import PortableRule
from ascendify.migrate.rules._literals import holder_name
from ascendify.migrate.rules.configured import configured_device_reads
from ascendify.targets import Safety
from ascendify.targets.portable import HELPER_GIVEN_DEVICE

# Objects argparse fills (``args.device``), whose options the file's add_argument calls define.
_PARSED = re.compile(r"(?:^|_)(?:args|opts?|options|flags)$", re.I)


class PortableGivenDevice(PortableRule):
    """What it does: reads a device taken from a configuration object or the parsed command line
    (the places NPU309 reports on the NPU target) through ``portable_device.given_device``:
    ``device = args.device`` becomes ``device = portable_device.given_device(args.device,
    "--device")``. The row names the option (the ``add_argument`` of the file that defines it) or
    the configuration key.

    Why: ``--device cuda`` or ``device: cuda`` in a YAML file is text the migration never sees; the
    helper maps ``cuda`` and ``cuda:N`` given at run time to the host's device (``npu:N``, or
    ``cpu``), says so once on standard error, and leaves every other value as given.

    Example: ``self.device = config.device`` becomes ``self.device =
    portable_device.given_device(config.device, "config.device")``.

    Fix safety: safe. ``choices`` of the option keep ``"cuda"``, so the command lines the original
    accepted are accepted still.
    """

    code = "PRT304"
    name = "portable-given-device"
    summary = "device given at run time (option, configuration) -> mapped to the host's device"
    safety = Safety.SAFE
    triggers = (b"cuda",)  # the file is GPU code: its configured device may well be CUDA


@checks(ast.Module, rules=(PortableGivenDevice,))
def check_given_device(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Module)
    for _, value in configured_device_reads(ctx):
        option, line = _option_of(ctx, value)
        where = f"option {option}, line {line}" if line else f"configuration {option}"
        quoted = repr(option) if '"' in option else json.dumps(option)
        text = f"{HELPER_GIVEN_DEVICE}({ctx.segment(value)}, {quoted})"
        message = (
            f'{ctx.segment(value)} -> {HELPER_GIVEN_DEVICE}(...): "cuda" given there at run time '
            f"({where}) means the host's device"
        )
        yield PortableGivenDevice.finding(value, message, ctx.replace(value, text))


def _option_of(ctx: Context, value: ast.expr) -> tuple[str, int]:
    """The command-line option defining ``args.device`` (``--device``) and the line of its
    ``add_argument``; otherwise the read as written (``config.device``) and 0."""
    owner = holder_name(value.value) if isinstance(value, ast.Attribute) else None
    if isinstance(value, ast.Attribute) and _PARSED.search(owner or ""):
        index = ctx.nodes
        for number in index.of(ast.Call):
            call = index.nodes[number]
            assert isinstance(call, ast.Call)
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr == "add_argument":
                flags = [
                    arg.value
                    for arg in call.args
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                ]
                flag = next((f for f in flags if f.startswith("--")), flags[0] if flags else "")
                if flag and value.attr == _destination(call, flag):
                    return flag, call.lineno
    return ctx.segment(value), 0


def _destination(call: ast.Call, flag: str) -> str:
    """Where argparse stores an option: its ``dest=``, else its long (else first) flag as a name."""
    for keyword in call.keywords:
        if keyword.arg == "dest" and isinstance(keyword.value, ast.Constant):
            return str(keyword.value.value)
    return flag.lstrip("-").replace("-", "_")
