"""NVIDIA apex -> torch and torch_npu: fused optimizers, DDP and fused normalization ported where a
counterpart computes the same; apex.amp and the rest reported with what to write instead."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascendify.migrate._imports import Insertion
from ascendify.migrate._rule import Context, Finding, Operation, Rule, finishes
from ascendify.migrate.rules._ports import (
    PORTERS,
    Port,
    Porter,
    Unported,
    import_fused_optimizers,
)
from ascendify.targets import Safety
from ascendify.targets.libraries import APEX_ADVICE, APEX_DEFAULT_ADVICE, APEX_PORTS, ApexPort


class ApexOptimizer(Rule):
    """What it does: replaces apex's ``FusedAdam`` (``adam_w_mode`` True, its default:
    ``torch_npu.optim.NpuFusedAdamW``; False: ``NpuFusedAdam``) and ``FusedSGD``
    (``NpuFusedSGD``) with torch_npu's fused optimizers, passing the arguments they share, giving
    apex's defaults where the counterpart's differ (``weight_decay=0.0`` for AdamW) and leaving out
    those that change no result (``set_grad_none``). The apex import goes once every use is ported.

    Why: apex's CUDA kernels do not exist on an NPU host (msFmkTransplt's documentation says
    FusedAdam "cannot be migrated automatically"); torch_npu's fused optimizers run the same update
    rule.

    Example: ``FusedAdam(model.parameters(), lr=1e-3)`` becomes
    ``torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=1e-3, weight_decay=0.0)``.

    Fix safety: unsafe: another fused kernel rounds differently. Arguments without a counterpart
    (``bias_correction=False``, ``wd_after_momentum=True``) leave the call to NPU022.
    """

    code = "NPU020"
    name = "apex-optimizer"
    summary = "apex FusedAdam/FusedSGD -> torch_npu.optim.NpuFused*"
    safety = Safety.UNSAFE
    triggers = (b"apex",)


class ApexModule(Rule):
    """What it does: replaces ``apex.parallel.DistributedDataParallel`` with torch's
    ``DistributedDataParallel`` and ``apex.normalization.FusedLayerNorm``/``FusedRMSNorm`` with
    ``torch.nn.LayerNorm``/``torch.nn.RMSNorm`` (``eps=1e-5``, apex's default), leaving out options
    that only tune speed (``delay_allreduce``, ``message_size``).

    Why: apex does not run on an NPU host; torch's classes compute the same and run there.

    Example: ``model = apex.parallel.DistributedDataParallel(model)`` becomes
    ``model = torch.nn.parallel.DistributedDataParallel(model)``.

    Fix safety: safe. Options that change the result (``gradient_predivide_factor``,
    ``allreduce_always_fp32``) leave the call to NPU022.
    """

    code = "NPU021"
    name = "apex-module"
    summary = "apex DDP / FusedLayerNorm / FusedRMSNorm -> torch"
    safety = Safety.SAFE
    triggers = (b"apex",)


class ApexUnported(Rule):
    """What it does: reports the apex calls no rule ports, with what to write instead:
    ``amp.initialize`` and ``amp.scale_loss`` (``torch.autocast`` and ``torch.amp.GradScaler``,
    a change of several statements), ``FusedLAMB``, and apex calls with arguments a counterpart
    lacks.

    Why: apex does not run on an NPU host.

    Example: ``model, optimizer = amp.initialize(model, optimizer, opt_level="O1")`` is reported.

    Fix safety: report only.
    """

    code = "NPU022"
    name = "apex-unported"
    summary = "apex call left in place (what to write instead)"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    triggers = (b"apex",)


def port_apex(
    ctx: Context, node: ast.Call, qualified: str, *, portable: bool, rules: dict[bool, type[Rule]]
) -> Port | None:
    """A call of an apex class with a counterpart (``rules``: the rule reporting an exact port and
    one reporting another); Unported for any other apex call."""
    candidates = [port for port in APEX_PORTS if port.apex == qualified]
    if not candidates:
        raise Unported(APEX_ADVICE.get(qualified, APEX_DEFAULT_ADVICE))
    if any(isinstance(a, ast.Starred) for a in node.args) or any(
        k.arg is None for k in node.keywords
    ):
        raise Unported("arguments passed with * or **")
    port = _variant(ctx, node, candidates)
    target = port.portable if portable else port.npu
    if not (portable or target.startswith("torch.") or ctx.facts.has(target)):
        raise Unported(f"torch_npu {ctx.facts.version} has no {target}")
    # The arguments passed on are copied verbatim: calls ported inside them still apply.
    text, kept = f"{target}(", []
    for index, argument in enumerate(_arguments(ctx, node, port)):
        text += ", " if index else ""
        for piece in argument:
            if isinstance(piece, ast.expr):
                start, end = ctx.span(piece)
                kept.append((start, end, len(text)))
            text += ctx.segment(piece) if isinstance(piece, ast.expr) else piece
    return Port(rules[port.exact], text + ")", tuple(kept))


def _variant(ctx: Context, node: ast.Call, candidates: list[ApexPort]) -> ApexPort:
    """The port whose ``when`` the call's arguments meet."""
    for port in candidates:
        if port.when is None:
            return port
        keyword, value, default = port.when
        given = next((k.value for k in node.keywords if k.arg == keyword), None)
        if given is None and len(node.args) <= len(port.positional):
            if value == default:
                return port
        elif given is not None and ast.unparse(given) == value:
            return port
    raise Unported("an argument chooses the update rule only when the program runs")


def _arguments(ctx: Context, node: ast.Call, port: ApexPort) -> list[tuple[str | ast.expr, ...]]:
    """The counterpart's arguments, each as text and nodes whose source is passed on."""
    if len(node.args) > len(port.positional):
        raise Unported(f"more than {len(port.positional)} positional arguments")
    parts: list[tuple[str | ast.expr, ...]] = [(arg,) for arg in node.args]
    passed = set(port.positional[: len(node.args)])
    defaults = dict(port.must_default)
    for keyword in node.keywords:
        assert keyword.arg is not None
        passed.add(keyword.arg)
        if keyword.arg in port.drops:
            continue
        if keyword.arg in defaults:
            if ast.unparse(keyword.value) != defaults[keyword.arg]:
                raise Unported(f"{keyword.arg}= has no counterpart")
            continue
        if keyword.arg not in (*port.positional, *port.keeps):
            raise Unported(f"unknown argument {keyword.arg}=")
        parts.append((f"{keyword.arg}=", keyword.value))
    parts.extend((f"{name}={value}",) for name, value in port.adds if name not in passed)
    return parts


def _port_npu(ctx: Context, node: ast.Call, qualified: str) -> Port | None:
    return port_apex(ctx, node, qualified, portable=False,
                     rules={True: ApexModule, False: ApexOptimizer})  # fmt: skip


PORTERS.append(
    Porter(ApexOptimizer, ApexUnported, ("apex",), _port_npu, "apex does not run on an NPU host",
           also=(ApexModule,))
)  # fmt: skip


@finishes(rules=(ApexOptimizer,))
def import_optim(ctx: Context, module: ast.Module, findings: list[Finding]) -> Iterator[Insertion]:
    return import_fused_optimizers(ApexOptimizer, findings)
