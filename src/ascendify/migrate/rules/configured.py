"""A device the code takes from its configuration or command line, where no literal is there to
migrate (minGPT's ``self.device = config.device``, set by ``--trainer.device=cuda``)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from ascendify.migrate._rule import Context, Finding, Operation, Rule, checks
from ascendify.migrate.rules._literals import holder_name
from ascendify.targets import Safety

_DEVICE = re.compile(r"^(?:dev|device)$", re.I)
# Objects that hold settings: a parsed command line or a configuration.
_SETTINGS = re.compile(
    r"(?:^|_)(?:config|cfg|conf|args|opts?|options|hparams|hps|settings|flags)$", re.I
)


class ConfiguredDevice(Rule):
    """What it does: reports where the code takes its device from a configuration object or the
    parsed command line (``self.device = config.device``, ``device = args.device``,
    ``device = cfg["device"]``).

    Why: a device named there (``--trainer.device=cuda``, ``device: cuda`` in a YAML file) is text
    the migration never sees: ``"cuda"`` then reaches ``.to()`` on an NPU host and raises (minGPT
    run with ``--trainer.device=cuda`` failed after both migrations without a word).

    Example: ``self.device = config.device`` is left and reported: give ``npu`` there, or map it
    where it is read (the portable target maps it at run time: PRT304).

    Fix safety: report only.
    """

    code = "NPU309"
    name = "configured-device"
    summary = "device read from a configuration or the command line (left in place)"
    safety = Safety.REPORT_ONLY
    operation = Operation.ADVICE
    triggers = (b"cuda",)  # the file is GPU code: its configured device may well be CUDA


@checks(ast.Module, rules=(ConfiguredDevice,))
def check_configured_device(
    ctx: Context, node: ast.AST, parent: ast.AST | None
) -> Iterator[Finding]:
    assert isinstance(node, ast.Module)
    for statement, value in configured_device_reads(ctx):
        message = (
            f"{ctx.segment(value)} is a device named outside the code (configuration or "
            'command line): "cuda" given there is not migrated; give "npu" there'
        )
        yield ConfiguredDevice.finding(statement, message)


def configured_device_reads(ctx: Context) -> Iterator[tuple[ast.stmt, ast.expr]]:
    """(the assignment, the value read) where a device-named holder takes a configuration's or
    the command line's device (``self.device = config.device``, ``device = args.device``)."""
    # The reads name no CUDA token, so their lines are not visited one by one: the assignments
    # of a file that names CUDA come from the pass over its statements.
    for statement in ctx.names.assignments:
        if statement.value is None:
            continue
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        value = statement.value
        if not any(_DEVICE.match(holder_name(target) or "") for target in targets):
            continue
        if _DEVICE.match(holder_name(value) or "") and _is_settings(value):
            yield statement, value


def _is_settings(value: ast.expr) -> bool:
    """``config.device``, ``self.config.device``, ``args.device``, ``cfg["device"]``."""
    if not isinstance(value, ast.Attribute | ast.Subscript):
        return False
    owner = holder_name(value.value)
    return owner is not None and _SETTINGS.search(owner) is not None
