"""Where the portable target keeps a CUDA check: the blocks a file runs only when CUDA is available
(found by :mod:`ascendify.migrate.rules._cuda_guards`) that reach a call working on CUDA only."""

from __future__ import annotations

import ast
import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field

from ascendify.migrate._project import CudaOnlyImport
from ascendify.migrate._rule import Context
from ascendify.migrate.rules._cuda_guards import (
    REGION_HOLDERS,
    Held,
    device_loops,
    guarded_regions,
    held_checks,
    holder,
    own_functions,
    reached_nodes,
)
from ascendify.source import NodeIndex, dotted_parts
from ascendify.targets.portable import module_member, portable_target


@dataclass
class _Guards:
    """The blocks this file runs only when CUDA is available, and the checks and loop bounds that
    must stay as written (worked out once per file, from its node index)."""

    ready: bool = False
    # The numbers of the nodes inside such a block: the first and the last of each outermost one.
    firsts: list[int] = field(default_factory=list)
    lasts: list[int] = field(default_factory=list)
    # id of a check or loop bound kept -> why: what it guards that runs on CUDA only
    kept: dict[int, str] = field(default_factory=dict)
    # A name holding a kept check that also guards code reaching no CUDA-only call (the device
    # choice of ``self.cuda = torch.cuda.is_available()``): id of its first check -> those uses,
    # each then asks for any accelerator itself, the name staying for the CUDA-only uses.
    split: dict[int, list[ast.expr]] = field(default_factory=dict)
    # The same where the name holds more than the check (``not args.no_cpu and ...``), which a
    # use cannot ask again: id of each of its checks -> what the report adds (the CPU fallback).
    fallback: dict[int, str] = field(default_factory=dict)

    def holds(self, index: NodeIndex, node: ast.AST) -> bool:
        """Whether ``node`` lies inside such a block."""
        number = index.number(node)
        at = bisect.bisect_right(self.firsts, number) - 1
        return at >= 0 and number <= self.lasts[at]


def file_guards(ctx: Context) -> _Guards:
    guards = ctx.state(_Guards)
    if guards.ready:
        return guards
    guards.ready = True
    index = ctx.nodes
    held, bare = held_checks(ctx)
    checked = [
        found
        for number in index.walk_order(index.of(*REGION_HOLDERS))
        for found in guarded_regions(ctx, index.nodes[number], held)
    ]
    parts = sorted(
        (number, index.last[number])
        for _, region in checked
        for number in map(index.number, region)
    )
    for first, last in parts:  # a region inside another adds nothing
        if not guards.lasts or first > guards.lasts[-1]:
            guards.firsts.append(first)
            guards.lasts.append(last)
    helpers = own_functions(ctx)
    free: list[ast.expr] = []  # holder uses guarding only what runs on any device
    for checks_, region in checked:
        blocking = next(_cuda_only_names(ctx, region, guards, helpers), None)
        if blocking is not None:
            reason = f"the check guards {blocking}"
            guards.kept.update((id(check), reason) for check in checks_)
        else:
            free += [check for check in checks_ if holder(check) in held]
    _split_holders(guards, held, bare, free)
    # A loop over range(device_count()) runs its body once on a CPU host once the bound is widened
    # (portable_device.device_count() is 1 there), where the original ran it never.
    for bounds, region in device_loops(ctx):
        blocking = next(_cuda_only_names(ctx, region, guards, helpers), None)
        if blocking is not None:
            reason = f"the loop it bounds calls {blocking}"
            guards.kept.update((id(bound), reason) for bound in bounds)
    return guards


def _split_holders(guards: _Guards, held: Held, bare: set[str], free: list[ast.expr]) -> None:
    """A name whose check is kept for some uses and not needed by others (``free``): those others
    ask for any accelerator where the name holds the check alone, or are reported as falling back
    to the CPU on a host with another accelerator."""
    by_key: dict[str, list[ast.expr]] = {}
    for use in free:
        key = holder(use)
        if key is not None and id(use) not in guards.kept and id(held[key][0]) in guards.kept:
            by_key.setdefault(key, []).append(use)
    for key, uses in by_key.items():
        if key in bare:
            guards.split[id(held[key][0])] = uses
            continue
        lines = ", ".join(sorted({str(use.lineno) for use in uses}, key=int))
        note = (
            f"; what {key} also chooses (line {lines}) stays on the CPU of a host with another "
            "accelerator: it holds more than the check"
        )
        guards.fallback.update((id(check), note) for check in held[key])


def _cuda_only_names(
    ctx: Context, region: list[ast.AST], guards: _Guards, helpers: dict[str, list[ast.AST]]
) -> Iterator[str]:
    """``torch.cuda`` names that ``region`` (and the functions and methods of this file it calls,
    however deep) leaves running on CUDA only: those with no device-agnostic spelling, unless a check that
    an accelerator is present guards them and the device module has them (``mem_get_info``)."""
    index = ctx.nodes
    imported = _cuda_only_imports(ctx)
    for node in reached_nodes(ctx, region, helpers):
        if isinstance(node, ast.Call) and imported:
            through = _imported_cuda_only(imported, node.func)
            if through is not None:
                yield through
            continue
        if not isinstance(node, ast.Attribute | ast.Name):
            continue
        qualified = ctx.names.qualified_name(node)
        if qualified is None:
            continue
        found = portable_target(qualified)
        if found is None or found[0].portable is not None:
            continue
        if not guards.holds(index, node) or module_member(qualified, ctx.facts) is None:
            yield qualified


@dataclass
class _Imported:
    """What this file imports from project modules with functions reaching a CUDA-only call."""

    found: dict[str, CudaOnlyImport] | None = None


def _cuda_only_imports(ctx: Context) -> dict[str, CudaOnlyImport]:
    imported = ctx.state(_Imported)
    if imported.found is None:
        project = ctx.settings.project
        imported.found = project.cuda_only_imports(ctx.names, ctx.path, ctx.settings.max_bytes)
    return imported.found


def _imported_cuda_only(imported: dict[str, CudaOnlyImport], func: ast.expr) -> str | None:
    """The project function a call runs that reaches a CUDA-only call (``rng.seed()``,
    ``TRACKER.save()``, ``helper()`` imported from such a module), described with what it reaches."""
    parts = dotted_parts(func)
    if parts is None or parts[0] not in imported:
        return None
    return imported[parts[0]].reached(parts[1:])
