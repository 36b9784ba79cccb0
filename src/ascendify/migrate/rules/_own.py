"""What the file defines itself: members named like torch's, and the NPU branches it already has.

A class with ``self.is_cuda = ...`` or ``def cuda(self)`` owns that member: ``self.is_cuda`` and
``loader.is_cuda`` (``loader = PrefetchLoader(...)``) read it, not torch's ``Tensor.is_cuda``. Code
that already branches on the NPU (``if x.device.type == "npu": ... elif ... == "cuda": ...``) keeps
its CUDA branch as the user wrote it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from ascendify.migrate._rule import Context
from ascendify.source import STATEMENT_LISTS
from ascendify.targets.devices import ATTRIBUTE_RENAMES, CUDA_DEVICE_TYPE, NPU_DEVICE_TYPE

_MEMBERS = frozenset({*ATTRIBUTE_RENAMES, "cuda"})  # members named after the device
_SELF = frozenset({"self", "cls"})
# Two searches led by a literal: re scans for a literal prefix fast, but not for ``\b`` or an
# alternation (``def(?<!\wdef)`` is ``\bdef``), which cost ten times as much on a large file.
_DEFINES_MEMBER = re.compile(r"def(?<!\wdef)\s+(?:is_)?cuda\b")
_ASSIGNS_MEMBER = re.compile(r"\.(?:is_)?cuda\s*(?:=[^=]|:)")
# The NPU's name where a test for it spells it ("npu", x.is_npu, torch.npu, torch_npu), not inside a
# word: "input" holds "npu" too, and nearly every file says "input".
_NAMES_NPU = re.compile(NPU_DEVICE_TYPE + r"(?<![A-Za-z]" + NPU_DEVICE_TYPE + ")")


@dataclass
class _Owned:
    """Per file: the members named after the device that the file defines, and the receivers that
    read them (collected on the first question)."""

    collected: bool = False
    members: set[str] = field(default_factory=set)  # member names the file defines
    receivers: set[tuple[str, str]] = field(default_factory=set)  # (receiver text, member)
    instances: set[tuple[str, str]] = field(default_factory=set)  # (variable, member)


def is_own_member(ctx: Context, node: ast.Attribute) -> bool:
    """Whether ``node`` (``recv.cuda``, ``recv.is_cuda``) names a member the file defines."""
    if node.attr not in _MEMBERS:
        return False
    owned = ctx.state(_Owned)
    if not owned.collected:
        owned.collected = True
        # Most files define no such member: a text search spares them the tree walks.
        text = ctx.source.text
        if _DEFINES_MEMBER.search(text) or _ASSIGNS_MEMBER.search(text):
            _collect(ctx, owned)
    if node.attr not in owned.members:
        return False
    receiver = node.value
    if isinstance(receiver, ast.Name) and (
        receiver.id in _SELF or (receiver.id, node.attr) in owned.instances
    ):
        return True
    return (ast.unparse(receiver), node.attr) in owned.receivers


def _collect(ctx: Context, owned: _Owned) -> None:
    classes: dict[str, set[str]] = {}  # class name -> members it defines
    for node, assigned in _classes(ctx, owned):
        defined = {
            stmt.name
            for stmt in node.body
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and stmt.name in _MEMBERS
        }
        defined |= assigned
        if defined:
            classes[node.name] = defined
            owned.members |= defined
    for stmt in ctx.names.assignments:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
            func = stmt.value.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            for member in classes.get(name or "", ()):
                owned.instances.update(
                    (target.id, member) for target in stmt.targets if isinstance(target, ast.Name)
                )


def _classes(ctx: Context, owned: _Owned) -> list[tuple[ast.ClassDef, set[str]]]:
    """Every class in ``ast.walk`` order (a later class of the same name wins), each with the
    attributes assigned on ``self``/``cls`` anywhere inside it; the members assigned on other
    receivers go into ``owned``. Read from the file's node index, never a walk per class."""
    index = ctx.nodes
    classes: list[tuple[ast.ClassDef, set[str]]] = []
    assigned_in: dict[int, set[str]] = {}  # a class's number -> its attributes
    for number in index.walk_order(index.of(ast.ClassDef)):
        node = index.nodes[number]
        assert isinstance(node, ast.ClassDef)
        classes.append((node, assigned_in.setdefault(number, set())))
    for number in index.of(ast.Attribute):
        node = index.nodes[number]
        assert isinstance(node, ast.Attribute)
        if not isinstance(node.ctx, ast.Store):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in _SELF:
            holder = index.parents[number]
            while holder >= 0:
                if holder in assigned_in:
                    assigned_in[holder].add(node.attr)
                holder = index.parents[holder]
        elif node.attr in _MEMBERS:
            owned.members.add(node.attr)
            owned.receivers.add((ast.unparse(node.value), node.attr))
    return classes


def cuda_branches_beside_npu(node: ast.If) -> Iterator[tuple[ast.expr, int, int]]:
    """``(test, first line, last line)`` of the CUDA branches of an if/elif chain that starts at
    ``node`` and also has an NPU branch (nothing for a chain without one)."""
    chain: list[ast.If] = [node]
    while len(chain[-1].orelse) == 1 and isinstance(chain[-1].orelse[0], ast.If):
        chain.append(chain[-1].orelse[0])
    if not any(mentions_device(branch.test, NPU_DEVICE_TYPE) for branch in chain):
        return
    for branch in chain:
        if mentions_device(branch.test, CUDA_DEVICE_TYPE) and not mentions_device(
            branch.test, NPU_DEVICE_TYPE
        ):
            last = branch.body[-1]
            yield branch.test, branch.lineno, last.end_lineno or last.lineno


def in_cuda_test_beside_npu(ctx: Context, node: ast.expr) -> bool:
    """Whether ``node`` lies in a value that tests for CUDA assigned beside one that tests for the NPU.

    ``self.is_cuda = dev.type == "cuda"`` next to ``self.is_npu = dev.type == "npu"``: the code
    tells the two devices apart already, and rewriting the first would make both true on an NPU host.
    """
    tests = ctx.state(_CudaTests)
    if tests.spans is None:
        # Most files never name the NPU: a text search spares them the tree walk.
        found = _NAMES_NPU.search(ctx.source.text) is not None
        tests.spans = _cuda_tests_beside_npu(ctx) if found else []
    last = node.end_lineno or node.lineno
    return any(first <= node.lineno and last <= end for first, end in tests.spans)


@dataclass
class _CudaTests:
    """Per file: the line spans of the values testing for CUDA assigned beside NPU tests (None
    until the first question)."""

    spans: list[tuple[int, int]] | None = None


def _cuda_tests_beside_npu(ctx: Context) -> list[tuple[int, int]]:
    spans = []
    stack: list[ast.AST] = [ctx.module]
    while stack:
        node = stack.pop()
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list):
                spans += _cuda_tests_in_block(ctx, block)
        # Statement lists hang only off statements, and a statement whose text never names the
        # NPU holds no NPU test: most of the file is never visited.
        stack.extend(
            child
            for name in STATEMENT_LISTS
            for child in getattr(node, name, None) or ()
            if _may_name_npu(ctx, child)
        )
    return spans


def _cuda_tests_in_block(ctx: Context, block: list[ast.stmt]) -> list[tuple[int, int]]:
    """The spans of the values testing for CUDA assigned in a block that assigns an NPU test."""
    values = [
        stmt.value
        for stmt in block
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None
    ]
    if not any(
        _may_name_npu(ctx, value) and _tests_device(value, NPU_DEVICE_TYPE) for value in values
    ):
        return []
    return [
        (value.lineno, value.end_lineno or value.lineno)
        for value in values
        if _tests_device(value, CUDA_DEVICE_TYPE) and not mentions_device(value, NPU_DEVICE_TYPE)
    ]


def _may_name_npu(ctx: Context, node: ast.AST) -> bool:
    """Whether a node's source spells the NPU's name at all, as any test for the NPU does (a text
    search, far cheaper than a walk). A ``case`` has no position of its own: it may."""
    return not hasattr(node, "lineno") or _NAMES_NPU.search(ctx.segment(node)) is not None


def _tests_device(value: ast.expr, device: str) -> bool:
    """Whether a value holds a comparison that names the device."""
    return any(
        isinstance(node, ast.Compare) and mentions_device(node, device) for node in ast.walk(value)
    )


def is_elif(node: ast.If, parent: ast.AST | None) -> bool:
    return isinstance(parent, ast.If) and parent.orelse == [node]


def mentions_device(test: ast.AST, device: str) -> bool:
    """Whether a condition names the device: ``"npu"``/``"npu:0"``, ``x.is_npu``, ``torch.npu``."""
    return any(_names_device(node, device) for node in ast.walk(test))


def _names_device(node: ast.AST, device: str) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value == device or node.value.startswith(device + ":")
    if isinstance(node, ast.Attribute):
        return node.attr in (device, f"is_{device}") or _is_availability(node.attr, device)
    return isinstance(node, ast.Name) and (
        node.id == f"torch_{device}" or _is_availability(node.id, device)
    )


def _is_availability(name: str, device: str) -> bool:
    """transformers' ``is_torch_npu_available``, accelerate's ``is_npu_available``."""
    return name in (f"is_{device}_available", f"is_torch_{device}_available")


def handles_npu(ctx: Context) -> bool:
    """Whether the file has code of its own for the NPU: a condition that names it
    (``elif device == "npu":``, ``if is_torch_npu_available():``). Its CUDA logic is then its
    author's, kept as written."""
    facts = ctx.state(_HandlesNpu)
    if facts.answer is None:
        index = ctx.nodes if _NAMES_NPU.search(ctx.source.text) is not None else None
        facts.answer = index is not None and any(
            mentions_device(index.nodes[number].test, NPU_DEVICE_TYPE)  # type: ignore[attr-defined]
            for number in index.of(ast.If, ast.IfExp, ast.While)
        )
    return facts.answer


@dataclass
class _HandlesNpu:
    answer: bool | None = None
