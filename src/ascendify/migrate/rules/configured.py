"""A device the code takes from its configuration or command line, where no literal is there to
migrate (minGPT's ``self.device = config.device``, set by ``--trainer.device=cuda``)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from ascendify.migrate._modes import EVERY_TARGET, Target
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

    Example: ``self.device = config.device`` is left and reported: give ``npu`` there (portable
    code: the host's device type, ``portable_device.device_type()``), or map it where it is read.

    Fix safety: report only.
    """

    code = "NPU309"
    name = "configured-device"
    summary = "device read from a configuration or the command line (left in place)"
    safety = Safety.REPORT_ONLY
    operation = Operation.ADVICE
    targets = EVERY_TARGET
    triggers = (b"cuda",)  # the file is GPU code: its configured device may well be CUDA


@checks(ast.Module, rules=(ConfiguredDevice,))
def check_configured_device(
    ctx: Context, node: ast.AST, parent: ast.AST | None
) -> Iterator[Finding]:
    # The reads name no CUDA token, so their lines are not visited one by one: the assignments
    # of a file that names CUDA come from the pass over its statements.
    assert isinstance(node, ast.Module)
    wanted = "the host's device type" if ctx.modes.target is Target.PORTABLE else '"npu"'
    for statement in ctx.names.assignments:
        if statement.value is None:
            continue
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        value = statement.value
        if not any(_DEVICE.match(holder_name(target) or "") for target in targets):
            continue
        if _DEVICE.match(holder_name(value) or "") and _is_settings(value):
            message = (
                f"{ctx.segment(value)} is a device named outside the code (configuration or "
                f'command line): "cuda" given there is not migrated; give {wanted} there'
            )
            yield ConfiguredDevice.finding(statement, message)


def _is_settings(value: ast.expr) -> bool:
    """``config.device``, ``self.config.device``, ``args.device``, ``cfg["device"]``."""
    if not isinstance(value, ast.Attribute | ast.Subscript):
        return False
    owner = holder_name(value.value)
    return owner is not None and _SETTINGS.search(owner) is not None
