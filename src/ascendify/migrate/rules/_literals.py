"""String literals in places that hold a device or a backend ("slots"), and how to edit them.

A slot is an expression where a device (or backend) name is expected: a device argument, the value
assigned to a variable named like ``device``, a side of a comparison with ``x.device.type``, a
function default, an argparse ``--device`` default. Only literals found by descending a slot
through conditionals, ``or``, containers, ``"cuda:" + ...`` and ``"cuda:{}".format(...)`` are ever
edited, never arbitrary strings (file names, log messages and comments stay as they are).
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Protocol

from ascendify.migrate._modes import Target
from ascendify.migrate._project_functions import DeviceFunction
from ascendify.migrate._rule import Context, Edit, Finding, Rule, checks
from ascendify.migrate.rules._flow import (
    may_call_own_function,
    reaches_slot,
    value_alternatives,
)
from ascendify.migrate.rules._own import in_cuda_test_beside_npu
from ascendify.source import dotted_parts

_QUOTED = re.compile(r"""([rRuUfFbB]{0,2})('''|\"\"\"|'|")""")


def slot_literals(node: ast.expr) -> Iterator[ast.Constant | ast.JoinedStr]:
    """The string literals whose value ends up in the slot ``node``."""
    # One generator per level of nesting (the alternatives' generator is paused, not stacked): a
    # deeply nested expression must not reach the recursion limit sooner than the parser does.
    for alternative in value_alternatives(node):
        if isinstance(alternative, ast.JoinedStr) or (
            isinstance(alternative, ast.Constant) and isinstance(alternative.value, str)
        ):
            yield alternative
        elif isinstance(alternative, ast.Tuple | ast.List | ast.Set):
            for element in alternative.elts:
                yield from slot_literals(element)
        elif isinstance(alternative, ast.Dict):
            # map_location={"cuda:1": "cuda:0"}: the keys name where tensors were saved (a CUDA
            # checkpoint stays a CUDA checkpoint); only the values say where to load them.
            for value in alternative.values:
                yield from slot_literals(value)
        elif isinstance(alternative, ast.BinOp) and isinstance(alternative.op, ast.Add | ast.Mod):
            yield from slot_literals(alternative.left)
        elif (
            isinstance(alternative, ast.Call)
            and isinstance(alternative.func, ast.Attribute)
            and alternative.func.attr == "format"
        ):
            yield from slot_literals(alternative.func.value)


def literal_edit(
    ctx: Context, node: ast.Constant | ast.JoinedStr, convert: Callable[[str], str | None]
) -> tuple[str, str, Edit] | None:
    """``(old, new, edit)`` rewriting the literal's leading text with ``convert``; None if not ours.

    A plain literal is edited only when its source spells the value without escapes or implicit
    concatenation; an f-string only in its leading text (``f"cuda:{rank}"``).
    """
    segment = ctx.segment(node)
    quoted = _QUOTED.match(segment)
    if quoted is None:
        return None
    body_start = quoted.end()
    if isinstance(node, ast.Constant):
        assert isinstance(node.value, str)
        quote = quoted.group(2)
        if segment[body_start:] != node.value + quote:
            return None
        old = node.value
    else:
        head = node.values[0] if node.values else None
        if not (isinstance(head, ast.Constant) and isinstance(head.value, str)):
            return None
        old = head.value
        if not segment.startswith(old, body_start) or "{" in old or "\\" in old:
            return None
    new = convert(old)
    if new is None or new == old:
        return None
    start, _ = ctx.span(node)
    return old, new, Edit(start + body_start, start + body_start + len(old), new)


def holder_name(node: ast.expr) -> str | None:
    """The name a value is held under: ``device`` for ``device``, ``self.device``, ``cfg["device"]``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        key = node.slice.value
        return key if isinstance(key, str) else None
    return None


class LiteralRewriter(Protocol):
    """Rewrites the literals of a slot another way than by converting them to other literals (the
    portable target's expressions): findings of ``rule`` (``compared``: the slot is compared with a
    holder)."""

    def __call__(
        self, ctx: Context, kind: SlotKind, slot: ast.expr, rule: type[Rule], compared: bool
    ) -> Iterator[Finding]: ...


@dataclass(frozen=True)
class SlotKind:
    """One kind of value held in slots (a device, a communication backend)."""

    label: str  # "device", for messages
    holder: re.Pattern[str]  # names of variables, attributes, parameters and keys holding one
    keywords: frozenset[str]  # call keywords that take one, whatever the callable
    convert: Callable[[str], str | None]
    argument_rule: type[Rule]  # a literal passed as an argument
    value_rule: type[Rule]  # a literal assigned to, compared with or defaulting a holder
    # Call keywords reported by another rule than ``argument_rule`` (map_location=).
    keyword_rules: dict[str, type[Rule]] = field(default_factory=dict)
    # Calls whose result is such a value ("get_backend()" for backends).
    holder_calls: frozenset[str] = field(default_factory=frozenset)
    # Attributes holding such a value on any object (".type" of a torch.device).
    holder_attributes: frozenset[str] = field(default_factory=frozenset)
    rewriter: LiteralRewriter | None = None  # None: each literal becomes ``convert`` of it
    # Whether the parameters of the project's own functions that reach a device are such slots.
    project_parameters: bool = False

    def is_holder(self, node: ast.expr) -> bool:
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name in self.holder_calls:
                return True
            # str(device) == "cuda:0"
            return name == "str" and len(node.args) == 1 and self.is_holder(node.args[0])
        if isinstance(node, ast.Attribute) and node.attr in self.holder_attributes:
            return True
        name = holder_name(node)
        return name is not None and self.holder.search(name) is not None

    def rewrite(
        self, ctx: Context, slot: ast.expr, rule: type[Rule], *, compared: bool = False
    ) -> Iterator[Finding]:
        """Rewrite the literals of a slot (``compared``: the slot is compared with a holder)."""
        if self.rewriter is not None:
            yield from self.rewriter(ctx, self, slot, rule, compared)
            return
        for literal in slot_literals(slot):
            edited = literal_edit(ctx, literal, self.convert)
            if edited is not None:
                old, new, edit = edited
                yield rule.finding(literal, f"{self.label} {old!r} -> {new!r}", edit)


@dataclass(frozen=True)
class Parameter:
    """Where a callable takes the value: positional indexes and keywords (and the rule reporting it)."""

    positions: tuple[int, ...]
    keywords: tuple[str, ...]
    rule: type[Rule] | None = None  # None: the kind's argument rule


# Each kind with its parameters and every rule its findings may name (the run's filter).
_KINDS: list[tuple[SlotKind, dict[str, Parameter], frozenset[type[Rule]]]] = []
_ARGPARSE_VALUE_KEYWORDS = ("default", "const", "choices")


def slot_kind(kind: SlotKind, parameters: dict[str, Parameter]) -> None:
    """Register a kind; ``parameters`` maps qualified callables (or ``".method"``) to its slots."""
    special = {p.rule for p in parameters.values() if p.rule is not None}
    rules = {kind.argument_rule, kind.value_rule, *kind.keyword_rules.values(), *special}
    _KINDS.append((kind, parameters, frozenset(rules)))
    _kinds_for.cache_clear()
    _slot_calls.cache_clear()


def slot_kind_variant(
    label: str, rule: type[Rule], special_rule: type[Rule], rewriter: LiteralRewriter
) -> None:
    """Register a variant of the kind first registered as ``label``: the same slots, its findings
    reported as ``rule`` (``special_rule`` where the kind has a rule of its own, as for
    ``map_location=``) and its literals rewritten by ``rewriter``."""
    kind, parameters, _ = next(entry for entry in _KINDS if entry[0].label == label)
    variant = dataclasses.replace(
        kind,
        argument_rule=rule,
        value_rule=rule,
        keyword_rules=dict.fromkeys(kind.keyword_rules, special_rule),
        rewriter=rewriter,
    )
    slot_kind(
        variant,
        {
            name: dataclasses.replace(p, rule=None if p.rule is None else special_rule)
            for name, p in parameters.items()
        },
    )


def _slot_rules() -> Iterator[type[Rule]]:
    """The rules of every registered kind (known once every rule module is imported)."""
    for _, _, rules in _KINDS:
        yield from rules


def _kinds(ctx: Context) -> tuple[tuple[SlotKind, dict[str, Parameter]], ...]:
    """The kinds this run rewrites: those with a rule the run applies."""
    return _kinds_for(ctx.rules)


@cache  # asked for every call, assignment and comparison walked; a run's rules never change
def _kinds_for(active: frozenset[type[Rule]]) -> tuple[tuple[SlotKind, dict[str, Parameter]], ...]:
    return tuple(
        (kind, parameters) for kind, parameters, rules in _KINDS if not active.isdisjoint(rules)
    )


@dataclass(frozen=True)
class _SlotCalls:
    """What a call needs for an argument of it to sit in a slot of the run's kinds: a callable
    named like one with slots (the last part of its qualified name, or its method name), or a
    keyword that takes a slot value whatever the callable."""

    names: frozenset[str]
    keywords: frozenset[str]

    def may_have_slots(self, ctx: Context, node: ast.Call) -> bool:
        func = node.func
        if isinstance(func, ast.Attribute):
            named = func.attr in self.names  # the last part of its qualified name, or a method
        elif isinstance(func, ast.Name):
            binding = ctx.names.bindings.get(func.id)  # an import may give it any name
            named = binding is not None and binding.qualified.rpartition(".")[2] in self.names
        else:
            named = False
        return named or any(keyword.arg in self.keywords for keyword in node.keywords)


@cache
def _slot_calls(active: frozenset[type[Rule]]) -> _SlotCalls:
    kinds = _kinds_for(active)
    return _SlotCalls(
        frozenset(name.rpartition(".")[2] for _, parameters in kinds for name in parameters),
        frozenset(keyword for kind, _ in kinds for keyword in kind.keywords),
    )


def slot_arguments(ctx: Context, node: ast.Call) -> Iterator[tuple[SlotKind, ast.expr, type[Rule]]]:
    """The arguments of a call that sit in a slot (a device or backend parameter), with their rule."""
    yield from _project_slot_arguments(ctx, node)
    # Most calls of a file have none: tell them apart before resolving the callable's name.
    if not _slot_calls(ctx.rules).may_have_slots(ctx, node):
        return
    func = node.func
    qualified = ctx.names.qualified_name(func)
    method = f".{func.attr}" if isinstance(func, ast.Attribute) and qualified is None else None
    for kind, parameters in _kinds(ctx):
        parameter = parameters.get(qualified or "") or parameters.get(method or "")
        seen: set[str] = set()
        if parameter is not None:
            rule = parameter.rule or kind.argument_rule
            for position in parameter.positions:
                if position < len(node.args) and not _starred_before(node, position):
                    yield kind, node.args[position], rule
            for keyword in node.keywords:
                if keyword.arg in parameter.keywords:
                    seen.add(keyword.arg)
                    yield kind, keyword.value, rule
        for keyword in node.keywords:
            if keyword.arg in kind.keywords and keyword.arg not in seen:
                yield kind, keyword.value, kind.keyword_rules.get(keyword.arg, kind.argument_rule)


@dataclass
class _ProjectCallables:
    """Per file: the project's functions with device parameters it imports, by the dotted name
    its calls use, and the last parts of those names (found on the first call the file makes)."""

    by_name: dict[str, DeviceFunction] | None = None
    last_names: frozenset[str] = frozenset()

    def of(self, ctx: Context) -> dict[str, DeviceFunction]:
        if self.by_name is None:
            self.by_name = ctx.settings.project.device_callables(ctx.names, ctx.path)
            self.last_names = frozenset(name.rpartition(".")[2] for name in self.by_name)
        return self.by_name


def _project_slot_arguments(
    ctx: Context, node: ast.Call
) -> Iterator[tuple[SlotKind, ast.expr, type[Rule]]]:
    """``move(batch, "cuda")`` where ``move`` is a function of another module of the project whose
    second parameter reaches a device there: that argument is a device slot, as ``device=`` is
    (a keyword named like a device is one for every call already)."""
    if not ctx.settings.project.functions:
        return
    callables = ctx.state(_ProjectCallables)
    known = callables.of(ctx)
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if called not in callables.last_names or may_call_own_function(ctx, node):
        return
    parts = dotted_parts(func)
    function = known.get(".".join(parts)) if parts else None
    if function is None:
        return
    for kind, _ in _kinds(ctx):
        if not kind.project_parameters:
            continue
        for position in function.positions:
            if position < len(node.args) and not _starred_before(node, position):
                yield kind, node.args[position], kind.argument_rule
        for keyword in node.keywords:
            if keyword.arg in function.keywords and keyword.arg not in kind.keywords:
                yield kind, keyword.value, kind.argument_rule


def _sinks(ctx: Context, node: ast.Call) -> Iterator[tuple[str, ast.expr]]:
    for kind, argument, rule in slot_arguments(ctx, node):
        yield _sink_label(kind, rule), argument


def _sink_label(kind: SlotKind, rule: type[Rule]) -> str:
    return f"{id(kind)}:{rule.code}"


def _names_cuda(literal: ast.Constant | ast.JoinedStr) -> bool:
    head = literal.values[0] if isinstance(literal, ast.JoinedStr) and literal.values else literal
    text = head.value if isinstance(head, ast.Constant) else None
    return isinstance(text, str) and ("cuda" in text or "nccl" in text.lower())


def _flowing_rule(
    ctx: Context, value: ast.expr, kind: SlotKind, parameters: dict[str, Parameter]
) -> type[Rule] | None:
    """The rule for a bound value that reaches a slot of ``kind``; None if it reaches none.

    A value reaching a slot with a rule of its own (``map_location``) gets that rule. Ask only about
    values that :func:`_holds_cuda_literal`: the others have nothing to rewrite.
    """
    special = {*kind.keyword_rules.values(), *(p.rule for p in parameters.values() if p.rule)}
    found = None
    for rule in (kind.argument_rule, *special):
        if reaches_slot(ctx, value, _sink_label(kind, rule), _sinks):
            if rule in special:
                return rule
            found = kind.value_rule
    return found


def _holds_cuda_literal(value: ast.expr) -> bool:
    """Whether a bound value holds a CUDA (or NCCL) literal: only then is its flow worth the file's
    data-flow analysis. Asked once per value, not once per kind of slot."""
    return any(_names_cuda(literal) for literal in slot_literals(value))


@checks(ast.Call, rules=_slot_rules)
def check_call(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    for kind, argument, rule in slot_arguments(ctx, node):
        yield from kind.rewrite(ctx, argument, rule)
    arguments = [*node.args, *(keyword.value for keyword in node.keywords)]
    flowing_candidates = (
        [value for value in arguments if _holds_cuda_literal(value)]
        if may_call_own_function(ctx, node)
        else []
    )
    for kind, parameters in _kinds(ctx):
        # f(dev="cuda") where the file's own f passes dev on to a device slot.
        for value in flowing_candidates:
            flowing = _flowing_rule(ctx, value, kind, parameters)
            if flowing is not None:
                yield from kind.rewrite(ctx, value, flowing)
        default = _looked_up_default(node, kind)
        if default is not None:
            yield from kind.rewrite(ctx, default, kind.value_rule)
        if isinstance(node.func, ast.Attribute):
            yield from _method_slots(ctx, node, node.func, kind)


def _looked_up_default(node: ast.Call, kind: SlotKind) -> ast.expr | None:
    """The default of ``getattr(args, "device", "cuda")`` or ``cfg.get("device", "cuda")``."""
    func = node.func
    if isinstance(func, ast.Name) and func.id == "getattr" and len(node.args) == 3:
        name, default = node.args[1], node.args[2]
    elif isinstance(func, ast.Attribute) and func.attr == "get" and len(node.args) == 2:
        name, default = node.args
    else:
        return None
    is_holder = (
        isinstance(name, ast.Constant)
        and isinstance(name.value, str)
        and kind.holder.search(name.value) is not None
    )
    return default if is_holder else None


def _starred_before(node: ast.Call, position: int) -> bool:
    return any(isinstance(arg, ast.Starred) for arg in node.args[: position + 1])


def _method_slots(
    ctx: Context, node: ast.Call, func: ast.Attribute, kind: SlotKind
) -> Iterator[Finding]:
    if func.attr == "add_argument" and any(
        isinstance(arg, ast.Constant)
        and isinstance(arg.value, str)
        and kind.holder.search(arg.value.lstrip("-").replace("-", "_"))
        for arg in node.args
    ):
        # parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
        for keyword in node.keywords:
            if _keeps_cuda_choice(ctx, kind, keyword):
                continue
            if keyword.arg in _ARGPARSE_VALUE_KEYWORDS:
                yield from kind.rewrite(ctx, keyword.value, kind.value_rule)
    elif func.attr in ("startswith", "endswith") and node.args and kind.is_holder(func.value):
        yield from kind.rewrite(ctx, node.args[0], kind.value_rule, compared=True)
    elif func.attr == "replace" and node.args and _text_of_holder(kind, func.value):
        # str(device).strip().lower().replace("cuda:", ""): parsing a device name
        yield from kind.rewrite(ctx, node.args[0], kind.value_rule, compared=True)


def _keeps_cuda_choice(ctx: Context, kind: SlotKind, keyword: ast.keyword) -> bool:
    """Portable code keeps ``"cuda"`` among a device option's choices: the command lines the
    original accepted still parse, and the helper maps the device given (PRT304)."""
    return (
        keyword.arg == "choices" and kind.label == "device" and ctx.modes.target is Target.PORTABLE
    )


_TEXT_METHODS = frozenset({"strip", "lstrip", "rstrip", "lower", "upper", "replace"})


def _text_of_holder(kind: SlotKind, node: ast.expr) -> bool:
    """``device``, ``str(device)``, ``str(device).strip().lower()``: a holder's value as text."""
    while (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _TEXT_METHODS
    ):
        node = node.func.value
    return kind.is_holder(node)


@checks(ast.Compare, rules=_slot_rules)
def check_compare(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    """``device.type == "cuda"``, ``backend != "nccl"``, ``args.device in ("cuda", "mps")``."""
    assert isinstance(node, ast.Compare)
    if in_cuda_test_beside_npu(ctx, node):
        return  # left as written and reported by NPU305
    operands = [node.left, *node.comparators]
    for kind, _ in _kinds(ctx):
        if any(kind.is_holder(operand) for operand in operands):
            for operand in operands:
                if isinstance(
                    operand, ast.Constant | ast.JoinedStr | ast.Tuple | ast.List | ast.Set
                ):
                    yield from kind.rewrite(ctx, operand, kind.value_rule, compared=True)


@checks(ast.Assign, ast.AnnAssign, rules=_slot_rules)
def check_assignment(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    """``device = "cuda"``, ``self.device: str = "cuda:0"``, ``cfg["backend"] = "nccl"``."""
    assert isinstance(node, ast.Assign | ast.AnnAssign)
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if node.value is None:
        return
    may_flow = _holds_cuda_literal(node.value)
    for kind, parameters in _kinds(ctx):
        flowing = _flowing_rule(ctx, node.value, kind, parameters) if may_flow else None
        if flowing is not None:
            yield from kind.rewrite(ctx, node.value, flowing)
        elif any(kind.is_holder(target) for target in targets):
            yield from kind.rewrite(ctx, node.value, kind.value_rule)


@checks(ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, rules=_slot_rules)
def check_defaults(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    """``def train(model, device="cuda", backend="nccl")``."""
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
    arguments = node.args
    positional = [*arguments.posonlyargs, *arguments.args]
    with_default = positional[len(positional) - len(arguments.defaults) :]
    pairs = list(zip(with_default, arguments.defaults, strict=True))
    pairs += [
        (arg, default)
        for arg, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
        if default is not None
    ]
    may_flow = [_holds_cuda_literal(default) for _, default in pairs]
    for kind, parameters in _kinds(ctx):
        for (arg, default), flows in zip(pairs, may_flow, strict=True):
            flowing = _flowing_rule(ctx, default, kind, parameters) if flows else None
            if flowing is not None:
                yield from kind.rewrite(ctx, default, flowing)
            elif kind.holder.search(arg.arg):
                yield from kind.rewrite(ctx, default, kind.value_rule)


@checks(ast.Dict, rules=_slot_rules)
def check_dict(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    """``{"device": "cuda", "backend": "nccl"}`` (configuration dictionaries)."""
    assert isinstance(node, ast.Dict)
    for kind, _ in _kinds(ctx):
        for key, value in zip(node.keys, node.values, strict=True):
            if (
                isinstance(key, ast.Constant)
                and isinstance(key.value, str)
                and kind.holder.search(key.value)
            ):
                yield from kind.rewrite(ctx, value, kind.value_rule)
