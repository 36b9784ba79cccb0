"""Device and backend literals where a device or backend is expected: the expressions asking the
host that replace them (the slots are found by :mod:`ascendify.migrate.rules._literals`)."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ascendify.migrate._rule import Context, Edit, Finding, Rule, checks
from ascendify.migrate.modes.portable.guards import file_guards
from ascendify.migrate.modes.portable.rules import (
    PortableBackend,
    PortableDevice,
    PortableDeviceToHelper,
    PortableDeviceToUnknownCall,
    PortableGuardKept,
    PortableMapLocation,
)
from ascendify.migrate.rules import devices as _npu_devices  # noqa: F401  (registers the slot kinds)
from ascendify.migrate.rules import distributed as _npu_distributed  # noqa: F401
from ascendify.migrate.rules._flow import value_alternatives
from ascendify.migrate.rules._literals import (
    SlotKind,
    literal_edit,
    slot_kind_variant,
    slot_literals,
)
from ascendify.migrate.rules.devices import devices_to_other_modules
from ascendify.targets.devices import CUDA_DEVICE_TYPE
from ascendify.targets.portable import (
    HELPER_BACKEND,
    HELPER_DEVICE,
    HELPER_DEVICE_TYPE,
    HELPER_IS_AVAILABLE,
)

# --- device and backend literals --------------------------------------------------------------


@dataclass(frozen=True)
class _Expressions:
    """Replaces the literals of a slot kind by expressions asking the host (``expression`` of the
    value; ``convert`` for the leading text of an f-string)."""

    expression: Callable[[str], str | None]
    convert: Callable[[str], str | None]
    # A literal compared with a holder, written with the given quote: the host's value where
    # there is an accelerator, the literal itself on a CPU-only host, so that the condition keeps
    # the truth value the original had there (on CUDA hosts, the one it had on CUDA).
    compared: Callable[[str, str], str | None]

    def __call__(
        self, ctx: Context, kind: SlotKind, slot: ast.expr, rule: type[Rule], compared: bool
    ) -> Iterator[Finding]:
        # A value bound to a name that reaches map_location may be used as text too (nanoGPT's
        # device = f"cuda:{rank}", then "cuda" in device): there the device is spelled as a string.
        held = rule is PortableMapLocation and id(slot) not in _map_location_arguments(ctx)
        for part in _alternatives(slot):
            indexed = _indexed_device(ctx, part) if rule is PortableMapLocation else None
            if indexed is not None:
                text = _as_text(f"{HELPER_DEVICE}({indexed})", held)
                yield rule.finding(part, f"{kind.label} -> {text}", ctx.replace(part, text))
                continue
            migrated = {
                id(inner)
                for node in ast.walk(part)
                if _is_migrated_choice(node)
                for inner in ast.walk(node)
            }
            for literal in slot_literals(part):
                if id(literal) not in migrated:
                    yield from self._rewrite_literal(
                        ctx, kind.label, literal, rule, compared, held=held
                    )

    def _rewrite_literal(
        self,
        ctx: Context,
        label: str,
        literal: ast.Constant | ast.JoinedStr,
        rule: type[Rule],
        compared: bool,
        *,
        held: bool,
    ) -> Iterator[Finding]:
        segment = ctx.segment(literal)
        if isinstance(literal, ast.JoinedStr):
            inner = "'" if segment.lstrip("rRfF")[:1] == '"' else '"'
            convert = self.convert
            if compared:
                convert = lambda old: _in_fstring(self.compared(old, inner))  # noqa: E731
            edited = literal_edit(ctx, literal, convert)
            if edited is not None:
                old, new, edit = edited
                yield rule.finding(literal, f"{label} {old!r} -> {new!r}", edit)
            return
        value = literal.value
        if not (
            isinstance(value, str)
            and len(segment) >= 2
            and segment[0] in "'\""
            and segment[1:-1] == value
        ):
            return
        kept = file_guards(ctx).kept.get(id(literal))
        if compared and kept is not None:
            message = f"{value!r} kept: {kept}, which runs on CUDA only"
            yield PortableGuardKept.finding(literal, message)
            return
        if compared:
            replacement = self.compared(value, segment[0])
        else:
            expression = _map_location if rule is PortableMapLocation else self.expression
            replacement = expression(value)
            if replacement is not None and replacement.startswith(HELPER_DEVICE + "("):
                replacement = _as_text(replacement, held)
            if replacement is not None and segment[0] == "'":
                replacement = replacement.replace('"', "'")
        if replacement is not None:
            yield rule.finding(
                literal,
                f"{label} {value!r} -> {replacement}",
                ctx.replace(literal, replacement),
            )


@dataclass
class _MapLocations:
    """The ``map_location`` arguments written in place in this file's calls (found once)."""

    ids: set[int] | None = None


def _map_location_arguments(ctx: Context) -> set[int]:
    found = ctx.state(_MapLocations)
    if found.ids is None:
        index = ctx.nodes
        calls = [index.nodes[number] for number in index.of(ast.Call)]
        found.ids = {
            id(keyword.value)
            for node in calls
            if isinstance(node, ast.Call)
            for keyword in node.keywords
            if keyword.arg == "map_location"
        }
        found.ids |= {
            id(node.args[1])
            for node in calls
            if isinstance(node, ast.Call)
            and len(node.args) > 1
            and ctx.names.qualified_name(node.func) == "torch.load"
        }
    return found.ids


def _as_text(device: str, held: bool) -> str:
    """``portable_device.device(i)`` as a string where a name holds it: ``"npu:1"``, ``"cuda:1"``,
    or ``"cpu"`` on a CPU host (which torch.load accepts, unlike ``"cpu:1"``)."""
    return f"str({device})" if held else device


def _is_migrated_choice(node: ast.AST) -> bool:
    """``(... if portable_device.is_available() else "cuda")``, written by a previous run."""
    return isinstance(node, ast.IfExp) and ast.unparse(node.test) == HELPER_IS_AVAILABLE


def _alternatives(slot: ast.expr) -> Iterator[ast.expr]:
    """The values a slot may take: the branches of conditionals and ``or`` (not of our own
    ``... if portable_device.is_available() else "cuda"``, which is migrated already)."""
    for alternative in value_alternatives(slot, settled=_is_migrated_choice):
        if not _is_migrated_choice(alternative):
            yield alternative


def _indexed_device(ctx: Context, node: ast.expr) -> str | None:
    """The index of ``f"cuda:{index}"`` or ``"cuda:{}".format(index)`` (torch.load needs a device
    object there: ``"cpu:0"`` cannot be restored to)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Constant)
        and node.func.value.value == CUDA_DEVICE_TYPE + ":{}"
        and len(node.args) == 1
        and not node.keywords
        and not isinstance(node.args[0], ast.Starred)
    ):
        return ctx.segment(node.args[0])
    if not isinstance(node, ast.JoinedStr) or len(node.values) != 2:
        return None
    head, value = node.values
    if (
        isinstance(head, ast.Constant)
        and head.value == CUDA_DEVICE_TYPE + ":"
        and isinstance(value, ast.FormattedValue)
        and value.conversion == -1
        and value.format_spec is None
    ):
        return ctx.segment(value.value)
    return None


def _device_in_fstring(value: str) -> str | None:
    """Leading f-string text: ``cuda:`` -> ``{portable_device.device_type()}:``."""
    if value == CUDA_DEVICE_TYPE or value.startswith(CUDA_DEVICE_TYPE + ":"):
        return "{" + HELPER_DEVICE_TYPE + "}" + value[len(CUDA_DEVICE_TYPE) :]
    return None


def _device_expression(value: str) -> str | None:
    if value == CUDA_DEVICE_TYPE:
        return HELPER_DEVICE_TYPE
    if value.startswith(CUDA_DEVICE_TYPE + ":"):
        rest = value[len(CUDA_DEVICE_TYPE) :].replace("{", "{{").replace("}", "}}")
        return 'f"{' + HELPER_DEVICE_TYPE + "}" + rest + '"'
    return None


def _map_location(value: str) -> str | None:
    """``torch.load`` cannot restore to ``"cpu:0"``: indexed targets become ``portable_device.device(N)``."""
    index = value[len(CUDA_DEVICE_TYPE) + 1 :]
    if value.startswith(CUDA_DEVICE_TYPE + ":") and index.isdigit():
        return f"{HELPER_DEVICE}({index})"
    return _device_expression(value)


def _compared_device(value: str, quote: str) -> str | None:
    """``"cuda"`` -> ``(<host type> if <accelerator> else "cuda")``; ``"cuda:0"`` as an f-string."""
    if value != CUDA_DEVICE_TYPE and not value.startswith(CUDA_DEVICE_TYPE + ":"):
        return None
    inner = "'" if quote == '"' else '"'
    choice = f"{HELPER_DEVICE_TYPE} if {HELPER_IS_AVAILABLE} else "
    if value == CUDA_DEVICE_TYPE:
        return f"({choice}{quote}{CUDA_DEVICE_TYPE}{quote})"
    rest = value[len(CUDA_DEVICE_TYPE) :].replace("{", "{{").replace("}", "}}")
    return f"f{quote}{{{choice}{inner}{CUDA_DEVICE_TYPE}{inner}}}{rest}{quote}"


def _compared_backend(value: str, quote: str) -> str | None:
    if value.lower() != "nccl":
        return None
    return f"({HELPER_BACKEND} if {HELPER_IS_AVAILABLE} else {quote}{value}{quote})"


def _in_fstring(replacement: str | None) -> str | None:
    """The leading text of an f-string for a compared replacement: ``{... else 'cuda'}:``."""
    if replacement is None:
        return None
    if replacement.startswith("("):
        return "{" + replacement[1:-1] + "}"
    return replacement[2:-1]  # f"{...}:0" -> {...}:0


def _backend_expression(value: str) -> str | None:
    return HELPER_BACKEND if value.lower() == "nccl" else None


slot_kind_variant(
    "device",
    PortableDevice,
    PortableMapLocation,
    _Expressions(_device_expression, _device_in_fstring, _compared_device),
)
slot_kind_variant(
    "backend",
    PortableBackend,
    PortableMapLocation,
    _Expressions(_backend_expression, lambda value: None, _compared_backend),
)


@checks(ast.Call, rules=(PortableDeviceToHelper, PortableDeviceToUnknownCall))
def check_device_to_other_module(
    ctx: Context, node: ast.AST, parent: ast.AST | None
) -> Iterator[Finding]:
    """NPU307 and NPU308 for the portable target: the host's device type instead of ``npu``."""
    assert isinstance(node, ast.Call)
    for called, named, (old, _, _), literal in devices_to_other_modules(ctx, node):
        edit = _host_device_edit(ctx, literal) if named else None
        if edit is not None:
            message = f"device {old!r} -> {edit.replacement} passed to {called}()"
            yield PortableDeviceToHelper.finding(literal, message, edit)
            continue
        message = (
            f"{old!r} passed to {called}(), which the migration cannot read: "
            f"if it is a device there, write {HELPER_DEVICE_TYPE}"
        )
        reported = ctx.span(literal)  # dropped where a user's rule rewrote the argument
        yield dataclasses.replace(
            PortableDeviceToUnknownCall.finding(literal, message), reported=reported
        )


def _host_device_edit(ctx: Context, literal: ast.Constant | ast.JoinedStr) -> Edit | None:
    """``"cuda:0"`` -> ``f"{portable_device.device_type()}:0"``; ``f"cuda:{rank}"`` -> its
    leading text so."""
    if isinstance(literal, ast.Constant):
        text = _device_expression(str(literal.value))
        return None if text is None else ctx.replace(literal, text)
    edited = literal_edit(ctx, literal, _device_in_fstring)
    return None if edited is None else edited[2]
