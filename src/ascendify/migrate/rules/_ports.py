"""Porting the calls of a CUDA-only library (flash-attn, xformers, apex) to torch or torch_npu.

A :class:`Porter` names the library, the rule that reports a ported call and the one that reports a
call it cannot port, and a function that writes a call's replacement (or raises :class:`Unported`
with the reason). Each file is looked at once: every call into the library is ported or explained,
and an import of the library is deleted when every use of the names it binds lies inside a ported
call (otherwise it stays, reported by NPU003).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ascendify.migrate._imports import Import, Insertion
from ascendify.migrate._rule import (
    Context,
    Edit,
    Finding,
    Rule,
    binding_trigger,
    checks,
    finishes,
)
from ascendify.migrate.rules.imports import REMOVED_BY_PORT, delete_lines
from ascendify.source import import_bindings
from ascendify.targets.libraries import FUSED_OPTIMIZERS_MODULE, SUBMODULES_TO_IMPORT


class Unported(Exception):
    """Why a call cannot be ported."""


@dataclass(frozen=True)
class Port:
    """The rule that reports a ported call (its safety) and the call's replacement; ``kept`` as
    :attr:`Edit.kept`: the original's parts it holds verbatim, where other edits (a ported call
    nested in an argument) still apply."""

    rule: type[Rule]
    text: str
    kept: tuple[tuple[int, int, int], ...] = ()


# (the file, the call, its qualified name) -> the port, or None: not a call it ports.
PortCall = Callable[[Context, ast.Call, str], Port | None]


@dataclass(frozen=True)
class Porter:
    rule: type[Rule]  # reports each import it deletes; its target and mode are the porter's
    unported: type[Rule]  # reports each call it cannot port
    libraries: tuple[str, ...]  # top-level modules
    port: PortCall
    advice: str  # what to write instead, for the calls it cannot port
    also: tuple[type[Rule], ...] = ()  # the other rules its ports report

    @property
    def rules(self) -> tuple[type[Rule], ...]:
        return (self.rule, self.unported, *self.also)


PORTERS: list[Porter] = []


def _library(qualified: str) -> str:
    return qualified.partition(".")[0]


@binding_trigger
def _ported_name(qualified: str) -> bool:
    return any(_library(qualified) in porter.libraries for porter in PORTERS)


@dataclass
class LibraryPorts:
    """This file's library calls (replacement or why not) and the imports left without a use."""

    done: bool = False
    ports: dict[int, tuple[Porter, Port]] = field(default_factory=dict)  # id(call) ->
    unported: dict[int, tuple[Porter, str]] = field(default_factory=dict)  # id(call) -> reason
    # id(import statement) -> the rule of the port that uses its names first
    removable: dict[int, type[Rule]] = field(default_factory=dict)


def _ports(ctx: Context) -> LibraryPorts:
    state = ctx.state(LibraryPorts)
    if not state.done:
        state.done = True
        _analyse(ctx, state)
    return state


def _analyse(ctx: Context, state: LibraryPorts) -> None:
    porters = {
        library: porter
        for porter in PORTERS
        if not ctx.rules.isdisjoint(porter.rules)
        for library in porter.libraries
    }
    bound = {
        local: porters[_library(binding.qualified)]
        for local, binding in ctx.names.bindings.items()
        if _library(binding.qualified) in porters
    }
    if not bound:
        return
    ported: list[tuple[int, int, Port]] = []  # spans of ported calls, outer ones first
    uses: list[ast.Name] = []
    index = ctx.nodes
    # In ast.walk's order, breadth first: a call before the calls in its arguments.
    for node in map(index.nodes.__getitem__, index.walk_order(index.of(ast.Call, ast.Name))):
        if isinstance(node, ast.Call):
            qualified = ctx.names.qualified_name(node.func) or ""
            porter = porters.get(_library(qualified))
            if porter is None or _consumed(ctx.span(node), ported) is not None:
                continue
            try:
                port = porter.port(ctx, node, qualified)
                if port is not None:
                    state.ports[id(node)] = (porter, port)
                    ported.append((*ctx.span(node), port))
            except Unported as reason:
                state.unported[id(node)] = (porter, str(reason))
        elif isinstance(node, ast.Name) and node.id in bound:
            uses.append(node)
    used = set()  # locals with a use no port consumes
    porting: dict[str, type[Rule]] = {}  # local -> the rule of the first port consuming it
    for use in sorted(uses, key=lambda use: (use.lineno, use.col_offset)):
        port = _consumed(ctx.span(use), ported)
        if port is None:
            used.add(use.id)
        else:
            porting.setdefault(use.id, port.rule)
    for statement in ctx.names.imports:
        locals_ = [local for local, _, _ in import_bindings(statement)]
        rules = [porting[local] for local in locals_ if local in porting]
        # An import nothing calls is NPU003's: left and reported.
        if rules and all(local in bound and local not in used for local in locals_):
            state.removable[id(statement)] = rules[0]


def _consumed(span: tuple[int, int], ported: list[tuple[int, int, Port]]) -> Port | None:
    """The port whose replacement consumes the code at ``span``: inside the ported call and not in
    a part of it the replacement keeps verbatim (those are still the program's)."""
    start, end = span
    for outer_start, outer_end, port in ported:
        inside = outer_start <= start and end <= outer_end
        if inside and not any(s <= start and end <= e for s, e, _ in port.kept):
            return port
    return None


def _removed(ctx: Context, node: ast.Import | ast.ImportFrom) -> bool:
    return id(node) in _ports(ctx).removable


REMOVED_BY_PORT.append(_removed)


def _served() -> Iterator[type[Rule]]:
    for porter in PORTERS:
        yield from porter.rules


@checks(ast.Import, ast.ImportFrom, rules=_served)
def check_import(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Import | ast.ImportFrom)
    rule = _ports(ctx).removable.get(id(node))
    if rule is None:
        return
    # The only statement of a block (try:, if ...:) becomes pass: the block must not be empty.
    edit = ctx.replace(node, "pass") if _alone_in_block(ctx, node) else delete_lines(ctx, node)
    if edit is not None:
        yield rule.finding(node, f"{ctx.segment(node)} removed (every use ported)", edit)


def _alone_in_block(ctx: Context, statement: ast.stmt) -> bool:
    index = ctx.nodes
    holder = index.nodes[index.parents[index.number(statement)]]
    for name in ("body", "orelse", "finalbody"):
        block = getattr(holder, name, None)
        if isinstance(block, list) and block and block[0] is statement:
            return len(block) == 1 and not isinstance(holder, ast.Module)
    return False


@checks(ast.Call, rules=_served)
def check_call(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    ports = _ports(ctx)
    name = ctx.segment(node.func)
    if id(node) in ports.ports:
        _, port = ports.ports[id(node)]
        message = f"{name}(...) -> {port.text.partition('(')[0]}(...)"
        start, end = ctx.span(node)
        yield port.rule.finding(node, message, Edit(start, end, port.text, port.kept))
    elif id(node) in ports.unported:
        porter, reason = ports.unported[id(node)]
        yield porter.unported.finding(node, f"{name}: {reason}; {porter.advice}")


@finishes(rules=_served)
def import_torch(ctx: Context, module: ast.Module, findings: list[Finding]) -> Iterator[Insertion]:
    """A port that names torch (``torch.nn.LayerNorm``, the causal mask's ``torch.ones``) in a file
    that does not import torch under its own name gets the import."""
    rules = {rule for porter in PORTERS for rule in porter.rules}
    naming = [
        finding
        for finding in findings
        if finding.rule in rules
        and finding.edit is not None
        and _TORCH.search(finding.edit.replacement)
    ]
    if naming:
        texts = [finding.edit.replacement for finding in naming if finding.edit is not None]
        modules = [m for m in SUBMODULES_TO_IMPORT if any(f"{m}." in text for text in texts)]
        yield Insertion(naming[0].rule, tuple(Import(m) for m in modules or ["torch"]))


_TORCH = re.compile(r"(?<![\w.])torch\.")


def import_fused_optimizers(rule: type[Rule], findings: list[Finding]) -> Iterator[Insertion]:
    """``import torch_npu.optim`` where ``rule`` wrote a fused optimizer (``import torch_npu`` does
    not import it)."""
    prefix = FUSED_OPTIMIZERS_MODULE + "."
    if any(f.rule is rule and f.edit and prefix in f.edit.replacement for f in findings):
        yield Insertion(rule, (Import(FUSED_OPTIMIZERS_MODULE),), follows="torch")
