"""``--target portable``: device-agnostic code for NPU, CUDA and CPU hosts, public torch APIs only.

Where torch cannot say something on every device, the code calls the generated ``portable_device``
module that the run copies into the result (never ascendify). Device and backend literals are found by
the same slot machinery as the NPU rules (:mod:`ascendify.migrate.rules._literals`); only the
replacement differs: an expression asking the host, not another literal.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ascendify.errors import AscendifyError
from ascendify.migrate._imports import Import, Insertion, local_name_of
from ascendify.migrate._modes import EVERY_TARGET, Modes, Target
from ascendify.migrate._rule import (
    Context,
    Edit,
    Extras,
    Finding,
    Mode,
    Operation,
    Rule,
    checks,
    finishes,
)
from ascendify.migrate._tree import TreeResult
from ascendify.migrate.extras import (
    copy_template,
    importing_folders,
    refuse_projects_own,
    template_bytes,
)
from ascendify.migrate.modes.specify_device import SPECIFY_DEVICE
from ascendify.migrate.rules import devices as _npu_devices  # noqa: F401  (registers the slot kinds)
from ascendify.migrate.rules import distributed as _npu_distributed  # noqa: F401
from ascendify.migrate.rules._flow import called_name, value_alternatives
from ascendify.migrate.rules._literals import (
    SlotKind,
    literal_edit,
    slot_kind_variant,
    slot_literals,
)
from ascendify.migrate.rules._own import is_own_member
from ascendify.migrate.rules.devices import DeviceIndex, device_index
from ascendify.migrate.rules.methods import is_chosen_method
from ascendify.source import NodeIndex
from ascendify.targets import Safety
from ascendify.targets.devices import CUDA_DEFAULT_DEVICE_CALLS, CUDA_DEVICE_TYPE
from ascendify.targets.portable import (
    HELPER_BACKEND,
    HELPER_DEVICE,
    HELPER_DEVICE_IDS,
    HELPER_DEVICE_TYPE,
    HELPER_FORK_RNG,
    HELPER_IS_AVAILABLE,
    HELPER_MODULE,
    HELPER_MODULE_OBJECT,
    HELPER_SEED_RNG_STATE,
    LEGACY_TENSOR_DTYPES,
    module_member,
    portable_target,
)
from ascendify.textfile import read_text


def _write_helper(modes: Modes, result: TreeResult, directory: Path) -> list[str]:
    """Copy the helper module beside every migrated file that imports it (and into the folders above)."""
    written = []
    for folder in importing_folders(directory, result, HELPER_MODULE):
        helper = folder / f"{HELPER_MODULE}.py"
        copy_template(f"{HELPER_MODULE}.py", directory / helper, directory)
        written.append(helper.as_posix())
    return written


def _check_no_own_helper(source: Path) -> None:
    """The helper is written beside migrated files: a module of the project's own of that name
    must not be replaced (one an earlier portable run generated is)."""
    name = f"{HELPER_MODULE}.py"
    refuse_projects_own(source, (name,), "--target portable", name, _generated_helper)


def _generated_helper(taken: Path) -> bool:
    try:
        text = read_text(taken, HELPER_MODULE)
    except (OSError, AscendifyError):  # not a small regular UTF-8 file: not ours
        return False
    first_line = template_bytes(f"{HELPER_MODULE}.py").decode().partition("\n")[0]
    return text.startswith(first_line)


PORTABLE = Mode(
    "portable",
    rank=1,
    when=lambda modes: modes.target is Target.PORTABLE,
    extras=Extras(
        reserves=frozenset({f"{HELPER_MODULE}.py"}),
        write=_write_helper,
        check=_check_no_own_helper,
    ),
)
_CUDA_TRIGGERS = (b"cuda", b"CUDA")
_AUTOCAST_POSITIONS = ("enabled", "dtype", "cache_enabled")  # torch.cuda.amp.autocast's order
_AMP_DEVICE_FIRST = frozenset({"torch.cuda.amp.autocast", "torch.cuda.amp.GradScaler"})
_DDP = "torch.nn.parallel.DistributedDataParallel"
_FORK_RNG = "torch.random.fork_rng"


class PortableRule(Rule):
    """Base of the rules of ``--target portable`` (the mode itself names the target)."""

    mode = PORTABLE
    targets = EVERY_TARGET


@dataclass
class _PortableFile:
    """What the portable rules work out for one file."""

    # local name -> what a rewritten import binds it to (its uses then need no edit)
    moved: dict[str, str] = field(default_factory=dict)
    needs_torch: bool = False  # a rewrite spells "torch." where the file binds no such name


class ImportPortableDevice(PortableRule):
    """What it does: inserts ``import portable_device`` (and ``import torch`` if the file lacks it)
    after the file's imports when a rewrite calls the generated helper module.

    Why: the helper answers what public torch APIs cannot on every device; it is copied beside
    every file that imports it and into each folder above, up to the result root, so every script
    finds it however it is started.

    Example: a file whose ``torch.cuda.synchronize()`` became ``portable_device.synchronize()``
    gains ``import portable_device``.

    Fix safety: safe.
    """

    code = "PRT001"
    name = "import-portable-device"
    summary = "insert import portable_device"
    safety = Safety.SAFE
    operation = Operation.INSERT


class PortableApi(PortableRule):
    """What it does: rewrites ``torch.cuda`` APIs to device-agnostic spellings:
    ``torch.cuda.is_available`` -> ``torch.accelerator.is_available``, ``torch.cuda.amp`` ->
    ``torch.amp``, and ``synchronize``, ``set_device``, ``device_count``, ``manual_seed``,
    ``Event``, memory statistics, legacy ``FloatTensor`` constructors, the RNG state functions
    and what model-parallel RNG trackers use (``_lazy_call``, ``default_generators``,
    ``torch.cuda.device``, ``torch._C._cuda_setRNGState``) ... -> ``portable_device.*``; a
    ``torch.cuda.manual_seed`` in a function that reads the CUDA RNG state (a tracker seeding the
    state it forks) -> ``portable_device.seed_rng_state``, which seeds the CPU's generator on a host
    without an accelerator.

    Why: ``torch.accelerator`` raises on a CPU-only host and CPU events cannot time; the helper
    does the right thing on NPU, CUDA and CPU.

    Example: ``torch.cuda.synchronize()`` becomes ``portable_device.synchronize()``.

    Fix safety: safe.
    """

    code = "PRT101"
    name = "portable-api"
    summary = "torch.cuda API -> torch.accelerator / torch.amp / portable_device"
    safety = Safety.SAFE
    triggers = _CUDA_TRIGGERS


class PortableApiUnsupported(PortableRule):
    """What it does: reports ``torch.cuda`` APIs without a device-agnostic counterpart
    (device properties, NVTX, CUDA graphs, ``torch.cuda.comm``, ...).

    Why: they mean something only on CUDA; the user keeps them behind a device check.

    Example: ``torch.cuda.get_device_properties(0)`` is left in place and reported.

    Fix safety: report only.
    """

    code = "PRT102"
    name = "portable-api-unsupported"
    summary = "torch.cuda API without a device-agnostic counterpart (left in place)"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    triggers = _CUDA_TRIGGERS


class PortableGuardKept(PortableRule):
    """What it does: keeps a ``torch.cuda.is_available()`` check as written when what it protects
    includes a ``torch.cuda`` API that works on CUDA only (``get_device_capability``, NVTX, CUDA
    graphs, ...), and reports it; inside a check that is widened, device-module functions torch_npu
    has too (``mem_get_info``, ``memory_stats``, ...) become ``portable_device.module().X`` (PRT101).
    The same holds for a check held by a name (``use_cuda = torch.cuda.is_available()``, then ``if
    use_cuda:``) and for the ``torch.cuda.device_count()`` that bounds a loop
    (``for i in range(torch.cuda.device_count())``, directly or through a name), whose body a
    CPU host would run once when widened. What the block calls of the file's own functions counts
    as part of it. A name held for such a block and also read where no CUDA-only call follows
    (``self.cuda = torch.cuda.is_available()``, then ``"cuda" if self.cuda else "cpu"``) is
    split: those other reads become ``torch.accelerator.is_available()`` (PRT101), so the device
    chosen is the host's accelerator; where the name holds more than the check (``not
    args.no_cuda and ...``), the row says that what it chooses stays on the CPU of an NPU host.

    Why: widened to ``torch.accelerator.is_available()``, the check would let an NPU host run a
    CUDA call, which raises there; kept, such a host skips the block as a CPU host does (a loop
    over the devices that read their properties returns ``[]`` there, as it did).

    Example: in ``if torch.cuda.is_available(): cap = torch.cuda.get_device_capability()`` the
    check is kept; in ``if torch.cuda.is_available(): free, total = torch.cuda.mem_get_info()`` it
    becomes ``torch.accelerator.is_available()`` and the call
    ``portable_device.module().mem_get_info()``.

    Fix safety: report only.
    """

    code = "PRT105"
    name = "portable-guard-kept"
    summary = "CUDA availability check or device-count loop bound kept: it protects CUDA-only calls"
    safety = Safety.REPORT_ONLY
    operation = Operation.ADVICE
    triggers = _CUDA_TRIGGERS


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


_AVAILABILITY = "torch.cuda.is_available"
_DEVICE_COUNT = "torch.cuda.device_count"
# The nodes a guarded region hangs off: those holding blocks of statements (a block's early exit
# guards the rest of it), a conditional and an ``and``.
_REGION_HOLDERS = tuple(
    kind
    for kind in vars(ast).values()
    if isinstance(kind, type)
    and issubclass(kind, ast.AST)
    and ({"body", "orelse", "finalbody"} & set(kind._fields) or kind is ast.BoolOp)
)


def _guards(ctx: Context) -> _Guards:
    guards = ctx.state(_Guards)
    if guards.ready:
        return guards
    guards.ready = True
    index = ctx.nodes
    held, bare = _held_checks(ctx)
    checked = [
        found
        for number in index.walk_order(index.of(*_REGION_HOLDERS))
        for found in _guarded_regions(ctx, index.nodes[number], held)
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
    helpers = _own_functions(ctx)
    free: list[ast.expr] = []  # holder uses guarding only what runs on any device
    for checks_, region in checked:
        blocking = next(_cuda_only_names(ctx, region, guards, helpers), None)
        if blocking is not None:
            reason = f"the check guards {blocking}"
            guards.kept.update((id(check), reason) for check in checks_)
        else:
            free += [check for check in checks_ if _holder(check) in held]
    _split_holders(guards, held, bare, free)
    # A loop over range(device_count()) runs its body once on a CPU host once the bound is widened
    # (portable_device.device_count() is 1 there), where the original ran it never.
    for bounds, region in _device_loops(ctx):
        blocking = next(_cuda_only_names(ctx, region, guards, helpers), None)
        if blocking is not None:
            reason = f"the loop it bounds calls {blocking}"
            guards.kept.update((id(bound), reason) for bound in bounds)
    return guards


def _split_holders(guards: _Guards, held: _Held, bare: set[str], free: list[ast.expr]) -> None:
    """A name whose check is kept for some uses and not needed by others (``free``): those others
    ask for any accelerator where the name holds the check alone, or are reported as falling back
    to the CPU on a host with another accelerator."""
    by_key: dict[str, list[ast.expr]] = {}
    for use in free:
        key = _holder(use)
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


# A name or ``self.x`` -> the ``torch.cuda.is_available`` calls of every value the file gives it
# (``use_cuda = not args.no_cuda and torch.cuda.is_available()``): testing it is testing them.
_Held = dict[str, list[ast.expr]]
# The nodes that bind a name (see _held_checks and _other_bindings).
_BINDERS = (
    ast.Assign, ast.AnnAssign, ast.arg, ast.For, ast.AsyncFor, ast.comprehension, ast.AugAssign,
    ast.NamedExpr, ast.withitem,
)  # fmt: skip


def _held_checks(ctx: Context) -> tuple[_Held, set[str]]:
    """The names (``use_cuda``, ``self.use_cuda``) that hold a CUDA check wherever the file binds
    them (a name also bound otherwise, a parameter, a loop, an assignment without the check, is
    not), and those of them always given the bare call (``torch.cuda.is_available()``)."""
    held: _Held = {}
    other: set[str] = set()
    mixed: set[str] = set()  # given more than the bare call somewhere
    index = ctx.nodes
    for number in index.walk_order(index.of(*_BINDERS)):
        node = index.nodes[number]
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            checks_ = _availability_checks(ctx, node.value, {})
            for target in targets:
                key = _holder(target)
                if key is None:
                    continue
                if checks_:
                    held.setdefault(key, []).extend(checks_)
                    if not _is_bare_check(ctx, node.value):
                        mixed.add(key)
                else:
                    other.add(key)
        elif isinstance(node, ast.arg):
            other.add(node.arg)
        for target in _other_bindings(index, node):  # a loop, ``with ... as``, ``+=``, unpacking
            key = _holder(target)
            if key is not None:
                other.add(key)
    held = {key: checks_ for key, checks_ in held.items() if key not in other}
    return held, set(held) - mixed


def _is_bare_check(ctx: Context, value: ast.expr) -> bool:
    return (
        isinstance(value, ast.Call)
        and not value.args
        and not value.keywords
        and ctx.names.qualified_name(value.func) == _AVAILABILITY
    )


def _holder(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}" if node.value.id == "self" else None
    return None


def _other_bindings(index: NodeIndex, node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
        return _expressions_in(index, node.target)
    if isinstance(node, ast.AugAssign | ast.NamedExpr):
        return [node.target]
    if isinstance(node, ast.withitem) and node.optional_vars is not None:
        return [node.optional_vars]
    if isinstance(node, ast.Assign):
        return [inner for target in node.targets if isinstance(target, ast.Tuple | ast.List)
                for inner in _expressions_in(index, target)]  # fmt: skip
    return []


def _expressions_in(index: NodeIndex, node: ast.AST) -> list[ast.expr]:
    """``node`` and the expressions inside it, in ``ast.walk``'s order."""
    return [inner for inner in index.subtree(index.number(node)) if isinstance(inner, ast.expr)]


def _availability_checks(ctx: Context, test: ast.expr, held: _Held) -> list[ast.expr]:
    """What makes ``test`` (or a term of its ``and``) a CUDA check: ``torch.cuda.is_available``
    called (or a name holding such a call), or the ``"cuda"`` a device is compared with
    (``device.type == "cuda"``, ``"cuda" in device``), which the portable target widens to the
    host's device type."""
    values = (
        test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    )
    found: list[ast.expr] = []
    for value in values:
        if isinstance(value, ast.Call) and ctx.names.qualified_name(value.func) == _AVAILABILITY:
            found.append(value.func)
        elif (key := _holder(value)) is not None and key in held:
            found += [value, *held[key]]
        elif isinstance(value, ast.Compare) and all(
            isinstance(op, ast.Eq | ast.In) for op in value.ops
        ):
            found += [
                side
                for side in (value.left, *value.comparators)
                if isinstance(side, ast.Constant) and side.value == CUDA_DEVICE_TYPE
            ]
    return found


_LEAVES = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _negated_checks(ctx: Context, test: ast.expr, held: _Held) -> list[ast.expr]:
    """What makes ``test`` a negated CUDA check: ``not torch.cuda.is_available()`` (or ``not``
    a name holding it), or a device compared unequal to ``"cuda"`` (``device.type != "cuda"``)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        called = test.operand
        if isinstance(called, ast.Call) and ctx.names.qualified_name(called.func) == _AVAILABILITY:
            return [called.func]
        if (key := _holder(called)) is not None and key in held:
            return [called, *held[key]]
    if isinstance(test, ast.Compare) and all(
        isinstance(op, ast.NotEq | ast.NotIn) for op in test.ops
    ):
        return [
            side
            for side in (test.left, *test.comparators)
            if isinstance(side, ast.Constant) and side.value == CUDA_DEVICE_TYPE
        ]
    return []


def _guarded_after(
    ctx: Context, node: ast.AST, held: _Held
) -> Iterator[tuple[list[ast.expr], list[ast.AST]]]:
    """``if device.type != "cuda": return`` guards the statements after it in its block."""
    for name in ("body", "orelse", "finalbody"):
        block = getattr(node, name, None)
        if not isinstance(block, list):
            continue
        for index, stmt in enumerate(block):
            if (
                isinstance(stmt, ast.If)
                and not stmt.orelse
                and isinstance(stmt.body[-1], _LEAVES)
                and (found := _negated_checks(ctx, stmt.test, held))
            ):
                yield found, list(block[index + 1 :])


def _guarded_regions(
    ctx: Context, node: ast.AST, held: _Held
) -> Iterator[tuple[list[ast.expr], list[ast.AST]]]:
    """(the availability checks, what they guard) of an ``if``, a conditional expression or an
    ``and`` (the operands after the check), and of an early exit on a negated check."""
    yield from _guarded_after(ctx, node, held)
    if isinstance(node, ast.If | ast.IfExp):
        found = _availability_checks(ctx, node.test, held)
        if found:
            yield found, list(node.body) if isinstance(node, ast.If) else [node.body]
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        for index, value in enumerate(node.values):
            found = _availability_checks(ctx, value, held)
            if found:
                yield found, list(node.values[index + 1 :])
                return


def _cuda_only_names(
    ctx: Context, region: list[ast.AST], guards: _Guards, helpers: dict[str, list[ast.AST]]
) -> Iterator[str]:
    """``torch.cuda`` names that ``region`` (and the functions and methods of this file it calls,
    however deep) leaves running on CUDA only: those with no device-agnostic spelling, unless a check that
    an accelerator is present guards them and the device module has them (``mem_get_info``)."""
    index = ctx.nodes
    pending, seen = list(region), set()
    while pending:
        for node in index.subtree(index.number(pending.pop())):
            if isinstance(node, ast.Call):
                # f(), self.f(), and a method of the file called on any object (tracker.add()).
                func = node.func
                called = called_name(func) or (
                    func.attr if isinstance(func, ast.Attribute) else None
                )
                for helper in helpers.get(called or "", ()):
                    if id(helper) not in seen:
                        seen.add(id(helper))
                        pending.append(helper)
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


def _own_functions(ctx: Context) -> dict[str, list[ast.AST]]:
    """The functions and methods this file defines, by name (a call ``f()`` or ``self.f()`` may
    run any of them)."""
    functions: dict[str, list[ast.AST]] = {}
    for node in ctx.names.functions:
        functions.setdefault(node.name, []).append(node)
    return functions


# A loop's device-count bound, by the name that holds it: one mapping per function (or lambda, or
# the module), from its own assignments.
_Bound = dict[str, list[ast.expr]]
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _device_loops(ctx: Context) -> Iterator[tuple[list[ast.expr], list[ast.AST]]]:
    """(the ``device_count`` calls, the body) of each loop over ``range(...device_count()...)``,
    the bound written in place or held by a name the enclosing function (or module) assigns it to;
    in the order a walk with a stack meets the loops, function by function."""
    if _DEVICE_COUNT.rpartition(".")[2] not in ctx.source.text:
        return  # however it is imported, a call of it spells its name
    index = ctx.nodes
    counts = [
        number
        for number in index.of(ast.Call)
        if ctx.names.qualified_name(index.nodes[number].func) == _DEVICE_COUNT  # type: ignore[attr-defined]
    ]
    if not counts:
        return
    bound: dict[int, _Bound] = {}  # a scope's number -> the names it binds to a device count
    for number in index.of(ast.Assign, ast.AnnAssign):
        node = index.nodes[number]
        assert isinstance(node, ast.Assign | ast.AnnAssign)
        names = bound.setdefault(index.scopes[number], {})
        if node.value is None:
            continue
        calls = _count_calls(index, counts, node.value)
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if calls and isinstance(target, ast.Name):
                names.setdefault(target.id, []).extend(calls)
    for number in index.stack_order(index.of(ast.For, ast.AsyncFor, *_COMPREHENSIONS)):
        bindings = []  # innermost scope first
        scope = index.scopes[number]
        while True:
            bindings.append(bound.get(scope, {}))
            if scope == 0:
                break
            scope = index.scopes[scope]
        node = index.nodes[number]
        if isinstance(node, ast.For | ast.AsyncFor):
            bounds = _range_bounds(ctx, counts, node.iter, bindings)
            if bounds:
                yield bounds, list(node.body)
        elif isinstance(node, _COMPREHENSIONS):
            results = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            for at, generator in enumerate(node.generators):
                bounds = _range_bounds(ctx, counts, generator.iter, bindings)
                if bounds:
                    later = [part for inner in node.generators[at + 1 :]
                             for part in (inner.iter, *inner.ifs)]  # fmt: skip
                    yield bounds, [*generator.ifs, *later, *results]


def _count_calls(index: NodeIndex, counts: list[int], expr: ast.expr) -> list[ast.expr]:
    """The called names of the ``device_count`` calls (``counts``: their numbers) inside ``expr``,
    in ``ast.walk``'s order."""
    inside = index.walk_order(index.within(counts, index.number(expr)))
    return [
        call.func for call in map(index.nodes.__getitem__, inside) if isinstance(call, ast.Call)
    ]


def _range_bounds(
    ctx: Context, counts: list[int], iterated: ast.expr, bindings: list[_Bound]
) -> list[ast.expr]:
    """The ``device_count`` calls (``counts``: their numbers) that bound ``range(...)``, directly
    or through a name (``bindings``: innermost scope first)."""
    if not (isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Name)):
        return []
    if iterated.func.id != "range":
        return []
    index = ctx.nodes
    bounds: list[ast.expr] = []
    for argument in iterated.args:
        bounds += _count_calls(index, counts, argument)
        for node in index.subtree(index.number(argument)):
            if isinstance(node, ast.Name):
                scope = next((b for b in bindings if node.id in b), {})
                bounds += scope.get(node.id, [])
    return bounds


class PortableAmpDevice(PortableRule):
    """What it does: passes the host's device type to amp APIs that took CUDA for granted:
    ``torch.cuda.amp.autocast(...)`` (now ``torch.amp.autocast``), ``GradScaler(...)`` and
    ``torch.amp.GradScaler()`` without a device; ``torch.random.fork_rng(...)`` becomes
    ``portable_device.fork_rng(...)``, which forks the CPU's state alone on a host without an
    accelerator (``torch.cpu`` has no RNG state: ``fork_rng(device_type="cpu")`` raises).

    Why: ``torch.amp`` takes the device type first; without it the scaler is bound to CUDA.

    Example: ``scaler = GradScaler()`` (imported from ``torch.cuda.amp``, now ``torch.amp``) becomes
    ``scaler = GradScaler(portable_device.device_type())``.

    Fix safety: safe. Positional arguments of ``autocast`` get their names
    (``autocast(True)`` becomes ``autocast(portable_device.device_type(), enabled=True)``).
    """

    code = "PRT103"
    name = "portable-amp-device"
    summary = "amp call -> explicit device type of the host"
    safety = Safety.SAFE
    triggers = (b"autocast", b"GradScaler")


class PortableAmpPositional(PortableRule):
    """What it does: reports ``torch.cuda.amp.autocast`` called with ``*args``.

    Why: ``torch.amp.autocast`` takes ``device_type`` first and ``dtype`` second, so unpacked
    positional arguments cannot be given their names (plain positional ones are, by PRT103).

    Example: ``with autocast(*options):`` is reported; pass the options by keyword.

    Fix safety: report only.
    """

    code = "PRT104"
    name = "portable-amp-positional"
    summary = "torch.cuda.amp.autocast with *args (left in place)"
    safety = Safety.REPORT_ONLY
    operation = Operation.UNSUPPORTED
    triggers = (b"autocast",)


class PortableCudaMethod(PortableRule):
    """What it does: rewrites ``x.cuda(...)`` to ``x.to(portable_device.device(...))``, keeping
    ``non_blocking=`` and the other keywords.

    Why: the device is the host's accelerator, or the CPU where there is none.

    Example: ``images = images.cuda(non_blocking=True)`` becomes
    ``images = images.to(portable_device.device(), non_blocking=True)``.

    A method picked by a conditional (``(x.cuda if gpu else x.cpu)()``) becomes a callable that
    does the same move.

    Fix safety: safe. The project's own ``cuda`` methods are left (NPU203).
    """

    code = "PRT201"
    name = "portable-cuda-method"
    summary = ".cuda() -> .to(portable_device.device())"
    safety = Safety.SAFE
    triggers = (b".cuda",)


class PortableIsCuda(PortableRule):
    """What it does: rewrites ``x.is_cuda`` to ``(x.device.type != "cpu")``.

    Why: code that asks whether data is on the accelerator must say yes on NPU too.

    Example: ``if x.is_cuda:`` becomes ``if (x.device.type != "cpu"):``.

    Fix safety: safe.
    """

    code = "PRT202"
    name = "portable-is-cuda"
    summary = ".is_cuda -> on-accelerator test"
    safety = Safety.SAFE
    triggers = (b"is_cuda",)


class PortableDevice(PortableRule):
    """What it does: replaces CUDA device literals where a device is expected (the places NPU301,
    NPU302 and NPU303 edit) by the host's device type: ``"cuda"`` becomes
    ``portable_device.device_type()``, ``"cuda:0"`` becomes
    ``f"{portable_device.device_type()}:0"``, ``f"cuda:{rank}"`` becomes
    ``f"{portable_device.device_type()}:{rank}"``.

    Why: the same code then runs on ``npu``, ``cuda`` or ``cpu``.

    Example: ``torch.autocast("cuda")`` becomes ``torch.autocast(portable_device.device_type())``.

    Fix safety: safe.
    """

    code = "PRT301"
    name = "portable-device"
    summary = "CUDA device literal -> the host's device type"
    safety = Safety.SAFE
    triggers = (b"cuda",)


class PortableDeviceIndex(PortableRule):
    """What it does: turns a bare device index passed to ``.to(...)`` (the places NPU304 edits)
    into the host's device: ``model.to(local_rank)`` becomes
    ``model.to(portable_device.device(local_rank))``.

    Why: an integer means a CUDA device to torch, which a CPU-only or NPU host does not have.

    Example: ``source = source.to(self.gpu_id)`` becomes
    ``source = source.to(portable_device.device(self.gpu_id))``.

    Fix safety: unsafe: a variable is taken to be an index by its name (as for NPU304).
    """

    code = "PRT303"
    name = "portable-device-index"
    summary = "integer device index in .to() -> the host's device"
    safety = Safety.UNSAFE
    triggers = DeviceIndex.triggers


class PortableMapLocation(PortableRule):
    """What it does: replaces the CUDA target of ``torch.load(map_location=...)`` by the host's
    device: ``"cuda"`` becomes ``portable_device.device_type()``, ``"cuda:0"`` becomes
    ``portable_device.device(0)`` (dict values too; dict keys name where tensors were saved).

    Why: ``torch.load`` cannot restore to ``"cpu:0"``, so an indexed target must be a device
    object, which is ``cpu`` on a CPU-only host.

    Example: ``torch.load(path, map_location="cuda:0")`` becomes
    ``torch.load(path, map_location=portable_device.device(0))``.

    Fix safety: safe.
    """

    code = "PRT302"
    name = "portable-map-location"
    summary = "torch.load map_location CUDA target -> the host's device"
    safety = Safety.SAFE
    triggers = (b"map_location",)


class PortableBackend(PortableRule):
    """What it does: replaces the ``"nccl"`` backend (where NPU401 would edit) by
    ``portable_device.backend()``, which is ``torch.distributed.get_default_backend_for_device``
    of the host's device (hccl on NPU, nccl on CUDA, gloo on CPU).

    Why: NCCL exists only on NVIDIA GPUs.

    Example: ``dist.init_process_group("nccl")`` becomes
    ``dist.init_process_group(portable_device.backend())``.

    Fix safety: safe.
    """

    code = "PRT401"
    name = "portable-backend"
    summary = "NCCL backend -> backend of the host's device"
    safety = Safety.SAFE
    triggers = (b"nccl", b"NCCL")


class PortableDeviceIds(PortableRule):
    """What it does: wraps ``device_ids``/``output_device`` of ``DistributedDataParallel`` in
    ``portable_device.device_ids(...)``, which is None on a CPU-only host.

    Why: DDP refuses device ids for a module on the CPU.

    Example: ``DDP(model, device_ids=[rank])`` becomes
    ``DDP(model, device_ids=portable_device.device_ids([rank]))``.

    Fix safety: safe.
    """

    code = "PRT402"
    name = "portable-device-ids"
    summary = "DDP device_ids -> None on CPU hosts"
    safety = Safety.SAFE
    triggers = (b"DistributedDataParallel", b"DDP")


def _spell(ctx: Context, qualified: str) -> str:
    """Source text naming ``qualified`` in this file (``th.accelerator...`` after ``import torch as th``)."""
    if qualified.startswith("torch."):
        local = local_name_of(ctx, "torch")
        if local is None:
            ctx.state(_PortableFile).needs_torch = True
        return (local or "torch") + qualified[len("torch") :]
    return qualified


# --- torch.cuda names -------------------------------------------------------------------------


@checks(ast.Name, ast.Attribute, rules=(PortableApi, PortableApiUnsupported, PortableGuardKept))
def check_cuda_name(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    if isinstance(parent, ast.Attribute) and parent.value is node:
        return
    assert isinstance(node, ast.Name | ast.Attribute)
    resolved = ctx.names.resolve(node)
    if resolved is None:
        return
    binding, rest = resolved
    qualified = ".".join([binding.qualified, *rest])
    if qualified == "torch.cuda" and _is_module_value(node, parent):
        # mod = torch.cuda if gpu else torch.cpu: the host's device module (torch.cpu without one)
        message = f"torch.cuda -> {HELPER_MODULE_OBJECT}"
        yield PortableApi.finding(node, message, ctx.replace(node, HELPER_MODULE_OBJECT))
        return
    found = portable_target(qualified)
    if found is None:
        return
    target, tail = found
    guards = _guards(ctx)
    if target.portable is None:
        member = module_member(qualified, ctx.facts)
        if member is not None and guards.holds(ctx.nodes, node) and isinstance(node.ctx, ast.Load):
            message = f"{qualified} -> {member} (inside a check that an accelerator is present)"
            yield PortableApi.finding(node, message, ctx.replace(node, member))
            return
        note = f": {target.note}" if target.note else ""
        yield PortableApiUnsupported.finding(node, f"{qualified} is not portable{note}")
        return
    if id(node) in guards.kept:
        message = f"{qualified}() kept: {guards.kept[id(node)]}, which runs on CUDA only"
        yield PortableGuardKept.finding(node, message + guards.fallback.get(id(node), ""))
        widened = _spell(ctx, target.portable) + "()"
        for use in guards.split.get(id(node), ()):
            message = f"{ctx.segment(use)} -> {widened} where it guards no CUDA-only call"
            yield PortableApi.finding(use, message, ctx.replace(use, widened))
        return
    if not isinstance(node.ctx, ast.Load):
        return
    legacy = _legacy_type_use(ctx, node, parent, qualified)
    if legacy is not None:
        yield legacy
        return
    local = node.id if isinstance(node, ast.Name) else _root(node)
    new = target.portable + tail
    if qualified in _SEEDS and _saves_rng_state(ctx, node):
        new = HELPER_SEED_RNG_STATE  # an RNG tracker seeds the state it saved: the CPU's too
    current = ctx.state(_PortableFile).moved.get(local, binding.qualified)
    spelled_now = ".".join([current, *rest])
    if spelled_now == new:
        return
    text = local + new[len(current) :] if new.startswith(current + ".") else _spell(ctx, new)
    yield PortableApi.finding(node, f"{qualified} -> {new}", ctx.replace(node, text))


_SEEDS = frozenset({"torch.cuda.manual_seed", "torch.cuda.random.manual_seed"})
_STATE_READS = frozenset({"torch.cuda.get_rng_state", "torch.cuda.random.get_rng_state"})


def _saves_rng_state(ctx: Context, node: ast.AST) -> bool:
    """Whether the function around ``node`` reads the CUDA RNG state (``orig =
    torch.cuda.get_rng_state(); torch.cuda.manual_seed(seed); named = torch.cuda.get_rng_state()``):
    the seed then makes a state to keep, which must be the generator's in use, the CPU's included."""
    index = ctx.nodes
    scope = index.scopes[index.number(node)]
    if scope == 0:
        return False  # the module's own statements: a seed for the whole program
    return any(
        isinstance(inner, ast.Name | ast.Attribute)
        and ctx.names.qualified_name(inner) in _STATE_READS
        for inner in (index.nodes[n] for n in range(scope, index.last[scope] + 1))
    )


def _is_module_value(node: ast.AST, parent: ast.AST | None) -> bool:
    """``torch.cuda`` read as a value, not the alias ``CD = torch.cuda`` the file's names follow."""
    alias = isinstance(parent, ast.Assign) and all(isinstance(t, ast.Name) for t in parent.targets)
    return isinstance(getattr(node, "ctx", None), ast.Load) and not alias and parent is not None


def _legacy_type_use(
    ctx: Context, node: ast.expr, parent: ast.AST | None, qualified: str
) -> Finding | None:
    """``x.type(torch.cuda.FloatTensor)`` and ``isinstance(x, torch.cuda.FloatTensor)``: the
    portable constructor is a function, not a type, so the whole call is spelled out."""
    _, _, name = qualified.rpartition(".")
    dtype = LEGACY_TENSOR_DTYPES.get(name)
    if dtype is None or qualified != f"torch.cuda.{name}":
        return None
    torch = _spell(ctx, "torch")
    if not (isinstance(parent, ast.Call) and parent.func is node):
        # Tensor = torch.cuda.FloatTensor: a value that may reach .type() or isinstance, so it
        # must stay a type: the device module's own legacy type, the CPU one without accelerator.
        text = f'getattr({HELPER_MODULE}.module(), "{name}", {torch}.{name})'
        if not _is_type_or_isinstance_argument(parent, node):
            return PortableApi.finding(node, f"{qualified} -> {text}", ctx.replace(node, text))
    if not isinstance(parent, ast.Call) or parent.keywords:
        return None
    func = parent.func
    if isinstance(func, ast.Attribute) and func.attr == "type" and parent.args == [node]:
        _, value_end = ctx.span(func.value)
        _, end = ctx.span(parent)
        text = f".to({HELPER_DEVICE}(), {torch}.{dtype})"
        return PortableApi.finding(
            node, f".type({qualified}) -> {text}", Edit(value_end, end, text)
        )
    if (
        isinstance(func, ast.Name)
        and func.id == "isinstance"
        and len(parent.args) == 2
        and parent.args[1] is node
    ):
        value = ctx.segment(parent.args[0])
        text = (
            f"(isinstance({value}, {torch}.Tensor) and {value}.dtype == {torch}.{dtype} "
            f'and {value}.device.type != "cpu")'
        )
        return PortableApi.finding(
            node, f"isinstance(..., {qualified}) -> {text}", ctx.replace(parent, text)
        )
    return None


def _is_type_or_isinstance_argument(parent: ast.AST | None, node: ast.expr) -> bool:
    if not isinstance(parent, ast.Call):
        return False
    func = parent.func
    if isinstance(func, ast.Attribute) and func.attr == "type":
        return parent.args == [node]
    return isinstance(func, ast.Name) and func.id == "isinstance" and parent.args[1:] == [node]


def _root(node: ast.expr) -> str:
    while isinstance(node, ast.Attribute):
        node = node.value
    assert isinstance(node, ast.Name)
    return node.id


@checks(ast.ImportFrom, ast.Import, rules=(PortableApi,))
def check_amp_import(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    """``from torch.cuda.amp import autocast`` / ``from torch.cuda import amp`` -> torch.amp."""
    if isinstance(node, ast.ImportFrom) and node.level == 0:
        if node.module == "torch.cuda.amp" and all(
            f"torch.cuda.amp.{alias.name}" in _AMP_DEVICE_FIRST for alias in node.names
        ):
            yield from _move_import(ctx, node, "torch.cuda.amp", "torch.amp")
        elif node.module == "torch.cuda" and [a.name for a in node.names] == ["amp"]:
            yield from _move_import(ctx, node, "torch.cuda", "torch")
    elif (
        isinstance(node, ast.Import)
        and len(node.names) == 1
        and node.names[0].name == "torch.cuda.amp"
        and node.names[0].asname
    ):
        yield from _move_import(ctx, node, "torch.cuda.amp", "torch.amp")


def _move_import(
    ctx: Context, node: ast.Import | ast.ImportFrom, old: str, new: str
) -> Iterator[Finding]:
    start, end = ctx.span(node)
    text = ctx.source.text[start:end]
    at = text.find(old)
    if at < 0:
        return  # spelled with spaces or continuations: the uses are rewritten one by one
    for alias in node.names:
        local = alias.asname or alias.name
        bound = f"{old}.{alias.name}" if isinstance(node, ast.ImportFrom) else old
        ctx.state(_PortableFile).moved[local] = new + bound[len(old) :]
    edit = Edit(start + at, start + at + len(old), new)
    yield PortableApi.finding(node, f"import from {old} -> {new}", edit)


# --- amp calls --------------------------------------------------------------------------------


@checks(ast.Call, rules=(PortableAmpDevice, PortableAmpPositional))
def check_amp_call(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    qualified = ctx.names.qualified_name(node.func)
    if qualified == _FORK_RNG:
        # torch.cpu has no RNG state: fork_rng(device_type="cpu") raises on a host without one.
        message = f"{qualified}(...) -> {HELPER_FORK_RNG}(...): the host's device, else the CPU's"
        yield PortableAmpDevice.finding(node, message, ctx.replace(node.func, HELPER_FORK_RNG))
        return
    if qualified in CUDA_DEFAULT_DEVICE_CALLS:
        yield from _default_device(ctx, node, qualified)
        return
    if qualified not in _AMP_DEVICE_FIRST:
        return
    if qualified.endswith("autocast") and node.args:
        yield from _autocast_by_keyword(ctx, node, qualified)
        return
    _, func_end = ctx.span(node.func)
    paren = ctx.source.text.index("(", func_end) + 1
    separator = ", " if node.args or node.keywords else ""
    edit = Edit(paren, paren, HELPER_DEVICE_TYPE + separator)
    yield PortableAmpDevice.finding(node, f"{qualified}(...) gets the host's device type", edit)


def _default_device(ctx: Context, node: ast.Call, qualified: str) -> Iterator[Finding]:
    """``torch.amp.GradScaler()`` defaults to CUDA: name the host's device type by keyword."""
    keyword, position = CUDA_DEFAULT_DEVICE_CALLS[qualified]
    if len(node.args) > position or any(k.arg in (keyword, None) for k in node.keywords):
        return
    if any(isinstance(arg, ast.Starred) for arg in node.args):
        return
    text = f"{keyword}={HELPER_DEVICE_TYPE}"
    arguments = [*node.args, *node.keywords]
    if arguments:
        at = max(ctx.span(argument)[1] for argument in arguments)
        edit = Edit(at, at, ", " + text)
    else:
        at = ctx.source.text.index("(", ctx.span(node.func)[1]) + 1
        edit = Edit(at, at, text)
    yield PortableAmpDevice.finding(node, f"{qualified}(...) gets {text}", edit)


def _autocast_by_keyword(ctx: Context, node: ast.Call, qualified: str) -> Iterator[Finding]:
    """``autocast(True)`` -> ``autocast(<device type>, enabled=True)``: torch.amp's order differs."""
    starred = any(isinstance(arg, ast.Starred) for arg in node.args)
    if starred or len(node.args) > len(_AUTOCAST_POSITIONS):
        yield PortableAmpPositional.finding(node, "autocast with *args: pass them by keyword")
        return
    named = [
        f"{name}={ctx.segment(arg)}"
        for name, arg in zip(_AUTOCAST_POSITIONS, node.args, strict=False)
    ]
    arguments = [HELPER_DEVICE_TYPE, *named, *(ctx.segment(k) for k in node.keywords)]
    _, func_end = ctx.span(node.func)
    start = ctx.source.text.index("(", func_end)
    _, end = ctx.span(node)
    edit = Edit(start, end, "(" + ", ".join(arguments) + ")")
    yield PortableAmpDevice.finding(node, f"{qualified}(...) gets the host's device type", edit)


# --- .cuda() and .is_cuda ---------------------------------------------------------------------


@checks(ast.Call, rules=(PortableCudaMethod,))
def check_cuda_method(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    func = node.func
    if not (
        isinstance(func, ast.Attribute)
        and func.attr == "cuda"
        and ctx.names.qualified_name(func.value) is None
        and not is_own_member(ctx, func)
    ) or any(isinstance(arg, ast.Starred) for arg in node.args):
        return
    device_args: list[ast.AST] = list(node.args[:1])
    others: list[list[str | ast.AST]] = []
    for keyword in node.keywords:
        if keyword.arg == "device":
            device_args = [keyword.value]
        else:
            others.append([keyword])
    if len(node.args) > 1:
        others.insert(0, ["non_blocking=", node.args[1]])
    if ctx.modes.has(SPECIFY_DEVICE):
        device_args = []  # the device set from DEVICE_ID, not the index written here
    # The arguments are kept as written, so CUDA calls inside them are migrated in this pass.
    pieces: list[str | ast.AST] = ["to(", f"{HELPER_DEVICE}(", *device_args, ")"]
    for other in others:
        pieces += [", ", *other]
    _, end = ctx.span(node)
    _, func_end = ctx.span(func)
    edit = ctx.compose(func_end - len("cuda"), end, [*pieces, ")"])
    yield PortableCudaMethod.finding(node, f".cuda() -> .to({HELPER_DEVICE}(...))", edit)


@checks(ast.Attribute, rules=(PortableIsCuda, PortableCudaMethod))
def check_is_cuda(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Attribute)
    if node.attr == "is_cuda" and isinstance(node.ctx, ast.Load) and not is_own_member(ctx, node):
        text = f'({ctx.segment(node.value)}.device.type != "cpu")'
        yield PortableIsCuda.finding(
            node, ".is_cuda -> on-accelerator test", ctx.replace(node, text)
        )
    elif (
        is_chosen_method(node, parent)
        and ctx.names.qualified_name(node.value) is None
        and not is_own_member(ctx, node)
    ):
        # (x.cuda if gpu else x.cpu)(...): a callable that moves x to the host's device.
        target = ctx.segment(node.value)
        text = f"(lambda *args, **kwargs: {target}.to({HELPER_DEVICE}(*args[:1]), **kwargs))"
        yield PortableCudaMethod.finding(node, f".cuda -> {text}", ctx.replace(node, text))


@checks(ast.Call, rules=(PortableDeviceIndex,))
def check_device_index(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    index = device_index(node)
    if index is not None:
        text = f"{HELPER_DEVICE}({ctx.segment(index)})"
        yield PortableDeviceIndex.finding(
            index, f"device index -> {text}", ctx.replace(index, text)
        )


# --- DDP device ids ---------------------------------------------------------------------------


@checks(ast.Call, rules=(PortableDeviceIds,))
def check_ddp_device_ids(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    if ctx.names.qualified_name(node.func) != _DDP:
        return
    values = [arg for index, arg in enumerate(node.args) if index in (1, 2)]
    values += [k.value for k in node.keywords if k.arg in ("device_ids", "output_device")]
    for value in values:
        if (isinstance(value, ast.Constant) and value.value is None) or (
            isinstance(value, ast.Call)
            and ctx.names.qualified_name(value.func) == HELPER_DEVICE_IDS
        ):
            continue
        text = f"{HELPER_DEVICE_IDS}({ctx.segment(value)})"
        yield PortableDeviceIds.finding(
            value, "DDP device ids -> None on CPU hosts", ctx.replace(value, text)
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
        kept = _guards(ctx).kept.get(id(literal))
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


# --- the helper import ------------------------------------------------------------------------


@finishes(rules=(ImportPortableDevice,))
def insert_helper_import(
    ctx: Context, module: ast.Module, findings: list[Finding]
) -> Iterator[Insertion]:
    imports = []
    if ctx.state(_PortableFile).needs_torch and any(f.rule is PortableApi for f in findings):
        imports.append(Import("torch"))
    if any(f.edit is not None and f"{HELPER_MODULE}." in f.edit.replacement for f in findings):
        imports.append(Import(HELPER_MODULE))
    if imports:
        yield Insertion(ImportPortableDevice, tuple(imports))
