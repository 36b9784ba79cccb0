"""Device names: ``"cuda"``, ``"cuda:0"`` and ``f"cuda:{rank}"`` where they name a device."""

from __future__ import annotations

import ast
import bisect
import builtins
import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass

from ascendify.migrate._modes import EVERY_TARGET
from ascendify.migrate._rule import Context, Edit, Finding, Operation, Rule, checks
from ascendify.migrate.rules._cuda_guards import exits_early, statements_after
from ascendify.migrate.rules._flow import may_call_own_function
from ascendify.migrate.rules._literals import (
    Parameter,
    SlotKind,
    holder_name,
    literal_edit,
    slot_arguments,
    slot_kind,
    slot_literals,
)
from ascendify.migrate.rules._own import (
    cuda_branches_beside_npu,
    handles_npu,
    in_cuda_test_beside_npu,
    is_elif,
    mentions_device,
)
from ascendify.targets import Safety
from ascendify.targets.devices import (
    CUDA_DEVICE_TYPE,
    DEVICE_KEYWORDS,
    DEVICE_PARAMETERS,
    NPU_DEVICE_TYPE,
    RENAMED_DEVICE_PARAMETERS,
)


class DeviceArgument(Rule):
    """What it does: rewrites a CUDA device literal passed where a device is expected: device
    keywords of any call (``device=``, ``device_type=``, ``output_device=``, ...), the device
    positions of torch factories and constructors (``torch.device("cuda", 0)``,
    ``torch.autocast("cuda")``, ``torch.amp.GradScaler("cuda")``, ``x.to("cuda:0")``,
    ``init_device_mesh("cuda", ...)``), the parameters of the project's own functions in other
    modules that hand the value on to a device (``move(batch, "cuda")`` where ``utils.move`` calls
    ``obj.to(where)``), including conditional values, f-strings and ``"cuda:{}".format(i)``.

    Why: on an Ascend host the device type is ``npu``; a ``cuda`` device cannot be created.

    Example: ``torch.zeros(3, device=f"cuda:{rank}")`` becomes
    ``torch.zeros(3, device=f"npu:{rank}")``.

    Fix safety: safe. Strings elsewhere (paths such as ``"cuda_ckpt.pt"``, log messages, comments)
    are never touched.
    """

    code = "NPU301"
    name = "device-argument"
    summary = "CUDA device literal passed as a device -> npu"
    safety = Safety.SAFE
    triggers = (b"cuda",)


class DeviceValue(Rule):
    """What it does: rewrites a CUDA device literal that is assigned to a device variable
    (``device = "cuda"``, ``self.device = ...``, ``cfg["device"] = ...``), used as a parameter
    default (``def f(device="cuda")``), as a ``"device"`` entry of a dict, as an argparse
    ``--device`` default or choice, or compared with a device (``x.device.type == "cuda"``,
    ``args.device.startswith("cuda")``).

    Why: the value flows into device arguments later; comparisons must test for the device the
    code now runs on.

    Example: ``if batch.device.type == "cuda":`` becomes ``if batch.device.type == "npu":``.

    Fix safety: safe.
    """

    code = "NPU302"
    name = "device-value"
    summary = "CUDA device literal held or compared as a device -> npu"
    safety = Safety.SAFE
    triggers = (b"cuda",)


class MapLocation(Rule):
    """What it does: rewrites the target device of ``torch.load(map_location=...)`` in all its
    forms: a string, ``torch.device(...)`` (by NPU301), a conditional, and the *values* of a dict
    (``{"cuda:1": "cuda:0"}`` becomes ``{"cuda:1": "npu:0"}``); a lambda that moves storages with
    ``storage.cuda()`` is rewritten by NPU201.

    Why: checkpoints saved on a GPU record CUDA locations; loading them on an NPU host must map
    them to the NPU. Dict keys are the locations recorded in the file and stay CUDA names.

    Example: ``torch.load(path, map_location="cuda:0")`` becomes
    ``torch.load(path, map_location="npu:0")``.

    Fix safety: safe.
    """

    code = "NPU303"
    name = "map-location"
    summary = "torch.load map_location CUDA target -> npu"
    safety = Safety.SAFE
    triggers = (b"map_location",)


def to_npu_device(value: str) -> str | None:
    """``"cuda"`` -> ``"npu"``, ``"cuda:1"`` -> ``"npu:1"``; None for anything else."""
    if value == CUDA_DEVICE_TYPE:
        return NPU_DEVICE_TYPE
    if value.startswith(CUDA_DEVICE_TYPE + ":"):
        return NPU_DEVICE_TYPE + value[len(CUDA_DEVICE_TYPE) :]
    return None


# Names of variables, attributes, parameters and keys holding a device.
_DEVICE_HOLDER = re.compile(
    r"(?:^|_)(?:dev|device)(?:s|_type|_name|_str)?$|(?:^|_)map_location$", re.I
)

slot_kind(
    SlotKind(
        label="device",
        holder=_DEVICE_HOLDER,
        keywords=DEVICE_KEYWORDS,
        convert=to_npu_device,
        argument_rule=DeviceArgument,
        value_rule=DeviceValue,
        keyword_rules={"map_location": MapLocation},
        holder_attributes=frozenset({"type"}),
        project_parameters=True,
    ),
    {
        parameter.callable: Parameter(
            parameter.positions,
            parameter.keywords,
            MapLocation if "map_location" in parameter.keywords else None,
        )
        for parameter in (*DEVICE_PARAMETERS, *RENAMED_DEVICE_PARAMETERS)
    },
)


class ExistingNpuBranch(Rule):
    """What it does: leaves the CUDA branch of an ``if``/``elif`` chain that already has an NPU
    branch exactly as written, and reports it: ``if x.device.type == "npu": ... elif
    x.device.type == "cuda": ...`` keeps its ``elif`` (and that branch's body). Likewise a CUDA test
    assigned beside an NPU test (``self.is_cuda = d.type == "cuda"`` next to ``self.is_npu = d.type
    == "npu"``) is left as written. In a file with NPU code of its own (a condition naming the
    NPU: ``elif device == "npu":``, ``is_torch_npu_available()``), every CUDA test and what it guards
    stay as written too: ``if device == "cuda":`` and its body, ``if device != "cuda": return`` and
    the rest of its block.

    Why: the code already handles the NPU; rewriting its CUDA branch would make a second, dead
    NPU branch and take the CUDA path away from CUDA hosts.

    Example: in ``if torch.npu.is_available(): d = "npu"`` / ``elif torch.cuda.is_available():
    d = "cuda"``, the ``elif`` branch is left and reported.

    Fix safety: report only.
    """

    code = "NPU305"
    name = "existing-npu-branch"
    summary = "CUDA branch beside an existing NPU branch (left in place)"
    safety = Safety.REPORT_ONLY
    operation = Operation.ADVICE
    targets = EVERY_TARGET
    keeps_lines = True
    triggers = (b"cuda",)  # a CUDA branch names CUDA


@checks(ast.If, rules=(ExistingNpuBranch,))
def check_npu_branch(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.If)
    if is_elif(node, parent):
        return  # its chain was looked at from the first ``if``
    for test, first, last in cuda_branches_beside_npu(node):
        message = f"CUDA branch kept as written: the code has an NPU branch ({ctx.segment(test)})"
        yield Finding(ExistingNpuBranch, first, last, message)


@checks(ast.If, rules=(ExistingNpuBranch,))
def check_cuda_logic_beside_npu(
    ctx: Context, node: ast.AST, parent: ast.AST | None
) -> Iterator[Finding]:
    """In a file with NPU code of its own, every CUDA test and what it guards stay as written:
    ``if device == "cuda":`` and its body, ``if device != "cuda": return`` and the rest of its block."""
    assert isinstance(node, ast.If)
    if is_elif(node, parent) or not handles_npu(ctx):
        return
    chain = [node]
    while len(chain[-1].orelse) == 1 and isinstance(chain[-1].orelse[0], ast.If):
        chain.append(chain[-1].orelse[0])
    if any(mentions_device(branch.test, NPU_DEVICE_TYPE) for branch in chain):
        return  # check_npu_branch keeps its CUDA branches
    for branch in chain:
        if not mentions_device(branch.test, CUDA_DEVICE_TYPE):
            continue
        last = branch.body[-1].end_lineno or branch.body[-1].lineno
        rest = statements_after(node, parent) if branch is node and exits_early(node) else []
        if rest:  # the CUDA path goes on after the exit
            last = max(last, rest[-1].end_lineno or rest[-1].lineno)
        message = (
            "CUDA logic kept as written: the file has NPU code of its own "
            f"({ctx.segment(branch.test)})"
        )
        yield Finding(ExistingNpuBranch, branch.lineno, last, message)


@checks(ast.Compare, rules=(ExistingNpuBranch,))
def check_cuda_test_beside_npu(
    ctx: Context, node: ast.AST, parent: ast.AST | None
) -> Iterator[Finding]:
    assert isinstance(node, ast.Compare)
    if mentions_device(node, CUDA_DEVICE_TYPE) and in_cuda_test_beside_npu(ctx, node):
        message = (
            f"CUDA test kept as written: the code tests for the NPU beside it ({ctx.segment(node)})"
        )
        yield Finding(ExistingNpuBranch, node.lineno, node.end_lineno or node.lineno, message)


# The names of a variable holding a device index, whole: "local_rank" holds an index, and
# "device_from_device_id" a torch.device.
_INDEX_NAMES = frozenset(
    {
        *(f"{scope}rank" for scope in ("", "local_", "global_")),
        *(f"{scope}gpu{end}" for scope in ("", "local_") for end in ("", "_id", "_idx", "_index")),
        *(f"device_{end}" for end in ("id", "idx", "index")),
        "dev_id",
    }
)


class DeviceIndex(Rule):
    """What it does: turns a bare device index passed to ``.to(...)`` (first or as ``device=``)
    into an NPU device: ``x.to(0)`` becomes ``x.to("npu:0")`` and ``model.to(local_rank)`` becomes
    ``model.to(f"npu:{local_rank}")``, for literals and for variables named like an index
    (``rank``, ``local_rank``, ``gpu``, ``gpu_id``, ``device_id``, ...).

    Why: an integer device means a CUDA device to torch; on an Ascend host it must name the NPU.

    Example: ``model = model.to(args.local_rank)`` becomes
    ``model = model.to(f"npu:{args.local_rank}")``.

    Fix safety: unsafe: a variable is taken to be an index by its name; if it holds a
    ``torch.device`` instead, the result is wrong.
    """

    code = "NPU304"
    name = "device-index"
    summary = "integer device index in .to() -> npu:<index>"
    safety = Safety.UNSAFE
    triggers = tuple(f".to({digit}".encode() for digit in range(10))
    trigger_words = tuple(name.encode() for name in _INDEX_NAMES)


def device_index(node: ast.Call) -> ast.expr | None:
    """The device index given to ``.to(...)`` (first or ``device=``): an int literal or a variable
    named like an index (``local_rank``, ``self.gpu_id``), never ``cfg["gpu"]``."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr == "to"):
        return None
    devices = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "device")]
    if not devices:
        return None
    index = devices[0]
    if isinstance(index, ast.Constant) and type(index.value) is int:
        return index
    name = holder_name(index)
    if name in _INDEX_NAMES and not isinstance(index, ast.Subscript):
        return index
    return None


@checks(ast.Call, rules=(DeviceIndex,))
def check_device_index(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    index = device_index(node)
    if index is None:
        return
    if isinstance(index, ast.Constant):
        replacement = f'"{NPU_DEVICE_TYPE}:{ctx.segment(index)}"'
    else:
        replacement = f'f"{NPU_DEVICE_TYPE}:{{{ctx.segment(index)}}}"'
    yield DeviceIndex.finding(
        index, f".to({ctx.segment(index)}) -> .to({replacement})", ctx.replace(index, replacement)
    )


class UnknownDeviceGuard(Rule):
    """What it does: wraps a ``.to(x)`` target of unknown kind (a name that says neither device,
    index nor dtype) in msFmkTransplt's guard: ``x.to(y)`` becomes
    ``x.to(f"npu:{y}" if isinstance(y, int) else y)``.

    Why: an int there is a CUDA device index, which torch_npu does not take as an NPU; a string,
    a ``torch.device``, a dtype or a tensor passes unchanged.

    Example: ``batch = batch.to(target)`` becomes
    ``batch = batch.to(f"npu:{target}" if isinstance(target, int) else target)``. A device holder
    (``self.device``) the file assigns only from its project's own function
    (``self.device = select_device(opt.gpu_ids)``) may be an index too, and is guarded the same way.

    Fix safety: safe: only an int changes, to the NPU of that index. Only in files that name
    CUDA somewhere: a file without any CUDA idiom is left as it is.
    """

    code = "NPU306"
    name = "unknown-device-guard"
    summary = ".to(x) of unknown kind -> int guard (as msFmkTransplt)"
    safety = Safety.SAFE
    triggers = (b".to(",)


@dataclass
class _TextNames:
    """Names the file binds to a string somewhere (assigned, or a parameter default)."""

    names: set[str] | None = None

    def of(self, ctx: Context) -> set[str]:
        if self.names is None:
            self.names = set()
            # Assignments and definitions are statements; a lambda is read from the node index.
            assigned: list[ast.AST] = [*ctx.names.assignments]
            assigned += [function.args for function in ctx.names.functions]
            if "lambda" in ctx.source.text:
                index = ctx.nodes
                assigned += [index.nodes[number].args for number in index.of(ast.Lambda)]  # type: ignore[attr-defined]
            for node in assigned:
                pairs: list[tuple[ast.expr, ast.expr | None]] = []
                if isinstance(node, ast.Assign):
                    pairs = [(target, node.value) for target in node.targets]
                elif isinstance(node, ast.arguments):
                    positional = [*node.posonlyargs, *node.args]
                    defaults = [None] * (len(positional) - len(node.defaults)) + node.defaults
                    pairs = [
                        (ast.Name(arg.arg), default)
                        for arg, default in zip(
                            [*positional, *node.kwonlyargs],
                            [*defaults, *node.kw_defaults],
                            strict=True,
                        )
                    ]
                for target, value in pairs:
                    if isinstance(target, ast.Name) and _is_text(value):
                        self.names.add(target.id)
        return self.names


@dataclass
class _HelperDevices:
    """Device holders (``device``, ``self.device``) the file assigns only from calls of its
    project's own functions (``device = select_device(opt.gpu)``): such a helper may answer a
    CUDA index (an int), so ``.to(device)`` gets the int guard too (msFmkTransplt's FD-GAN case)."""

    texts: set[str] | None = None

    def of(self, ctx: Context) -> set[str]:
        if self.texts is None:
            self.texts = self._find(ctx)
        return self.texts

    @staticmethod
    def _find(ctx: Context) -> set[str]:
        """Only the lines that assign a name a call's value are looked at (a scan of the text), and
        then the assignments on lines that assign one of those names (from the pass over the
        statements): not a walk of the file."""
        text = ctx.source.text
        candidates = {match.group(1) for match in _ASSIGNED_FROM_CALL.finditer(text)}
        if not candidates:
            return set()
        assigning = re.compile(
            r"^[ \t]*(?:"
            + "|".join(map(re.escape, sorted(candidates)))
            + r")[ \t]*(?::[^=\n]*)?=(?!=)",
            re.MULTILINE,
        )
        lines: list[int] = []
        line, counted = 1, 0
        for match in assigning.finditer(text):  # in order: each line break is counted once
            line += text.count("\n", counted, match.start())
            counted = match.start()
            if not lines or lines[-1] != line:
                lines.append(line)
        helper: set[str] = set()
        other: set[str] = set()
        for node in ctx.names.assignments:
            if node.value is None or not _spans_a_line(node, lines):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            from_helper = isinstance(node.value, ast.Call) and _project_call(ctx, node.value)
            for target in targets:
                if isinstance(target, ast.Name | ast.Attribute):
                    (helper if from_helper else other).add(ctx.segment(target))
        return helper - other


def _spans_a_line(node: ast.stmt, lines: list[int]) -> bool:
    """Whether a statement spans one of ``lines`` (sorted)."""
    at = bisect.bisect_left(lines, node.lineno)
    return at < len(lines) and lines[at] <= (node.end_lineno or node.lineno)


# ``device = select_device(...)``, ``self.device: str = helpers.pick(...)``: a name given a call's
# value at the start of a line (torch's own calls are never a project's helper).
_ASSIGNED_FROM_CALL = re.compile(
    r"^[ \t]*([A-Za-z_][\w.]*)[ \t]*(?::[^=\n]*)?=[ \t]*(?!torch\.)[A-Za-z_][\w.]*\(", re.MULTILINE
)


def _project_call(ctx: Context, call: ast.Call) -> bool:
    """A call of another module's function that is neither torch's nor a builtin (the project's,
    or unknown); the file's own functions are read where they are defined."""
    func = call.func
    if (isinstance(func, ast.Name) and func.id in _BUILTIN_NAMES) or may_call_own_function(
        ctx, call
    ):
        return False
    qualified = ctx.names.qualified_name(func)
    return qualified is None or not qualified.startswith("torch")


def _is_text(value: ast.expr | None) -> bool:
    return isinstance(value, ast.JoinedStr) or (
        isinstance(value, ast.Constant) and isinstance(value.value, str)
    )


# The argument text msFmkTransplt leaves alone (a dtype, a memory format, the CPU, a grad flag).
_NOT_A_DEVICE = re.compile(
    r"type|bool|int|short|long|half|float|double|complex|memory_format|grad|cpu"
)


@checks(ast.Call, rules=(UnknownDeviceGuard,))
def check_unknown_device(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr == "to") or device_index(node):
        return
    if CUDA_DEVICE_TYPE not in ctx.source.text:
        return  # code without any CUDA idiom is not the migration's: an int there is the CPU's
    given = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "device")]
    if len(given) != 1 or not isinstance(given[0], ast.Name | ast.Attribute):
        return
    target = given[0]
    text = ctx.segment(target)
    name = holder_name(target)
    if (
        name is None
        or (_DEVICE_HOLDER.search(name) and text not in ctx.state(_HelperDevices).of(ctx))
        or _NOT_A_DEVICE.search(text)
        or ctx.names.qualified_name(target) is not None  # torch.float16, a module's constant
    ):
        return
    if isinstance(target, ast.Name) and target.id in ctx.state(_TextNames).of(ctx):
        return  # bound to a string: a device name, migrated where it is written
    guarded = f'f"{NPU_DEVICE_TYPE}:{{{text}}}" if isinstance({text}, int) else {text}'
    yield UnknownDeviceGuard.finding(
        target, f".to({text}): an int index -> npu:<index>", ctx.replace(target, guarded)
    )


class DeviceToHelper(Rule):
    """What it does: rewrites a CUDA device literal (``"cuda"``, ``"cuda:1"``, ``f"cuda:{rank}"``)
    passed by position to a function of another module whose name says it takes a device
    (``state_dict_to_device(sd, "cuda")``, ``move_to_device(batch, "cuda:0")``).

    Why: the helper, defined elsewhere in the project or in a library, passes the value on to
    ``.to()`` or ``torch.device``; the migration does not see its parameters from here.

    Example: ``sd = state_dict_to_device(sd, "cuda")`` becomes ``state_dict_to_device(sd, "npu")``.

    Fix safety: unsafe: the helper is read by its name; check that it takes a device there.
    """

    code = "NPU307"
    name = "device-to-helper"
    summary = "CUDA device literal passed to a helper named for devices -> npu"
    safety = Safety.UNSAFE
    triggers = (b"cuda",)


class DeviceToUnknownCall(Rule):
    """What it does: reports a CUDA device literal passed by position to a function of another
    module that the migration cannot read (``configure(model, "cuda")``).

    Why: the value may be a device the function passes on (then it must say ``"npu"``) or a label;
    the migration cannot tell, and says so rather than leave it silently.

    Example: ``prepare(model, "cuda:0")`` with ``prepare`` imported from the project is reported.

    Fix safety: report only.
    """

    code = "NPU308"
    name = "device-to-unknown-call"
    summary = "CUDA device literal passed to a function the migration cannot read (reported)"
    safety = Safety.REPORT_ONLY
    operation = Operation.ADVICE
    triggers = (b"cuda",)


_NAMED_FOR_DEVICES = re.compile(r"device", re.I)
_EXACT_DEVICE = re.compile(r"cuda(?::\d*)?")


@checks(ast.Call, rules=(DeviceToHelper, DeviceToUnknownCall))
def check_device_to_other_module(
    ctx: Context, node: ast.AST, parent: ast.AST | None
) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    for called, named, (old, new, edit), literal in devices_to_other_modules(ctx, node):
        if named:
            message = f"device {old!r} -> {new!r} passed to {called}()"
            yield DeviceToHelper.finding(literal, message, edit)
        else:
            message = (
                f"{old!r} passed to {called}(), which the migration cannot read: "
                f"if it is a device there, write {new!r}"
            )
            # Dropped where a user's rule rewrote the argument (-r change_argument).
            reported = ctx.span(literal)
            yield dataclasses.replace(
                DeviceToUnknownCall.finding(literal, message), reported=reported
            )


def devices_to_other_modules(
    ctx: Context, node: ast.Call
) -> Iterator[tuple[str, bool, tuple[str, str, Edit], ast.Constant | ast.JoinedStr]]:
    """``(called name, whether the name says it takes a device, the NPU edit, the literal)`` for
    each CUDA device literal passed by position to a function of another module whose parameters
    the migration cannot read (``prepare(model, "cuda")``)."""
    func = node.func
    called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if called is None or called in _BUILTIN_NAMES or may_call_own_function(ctx, node):
        return  # a builtin, or the file's own function: its parameters are followed (NPU302)
    qualified = ctx.names.qualified_name(func)
    root = func
    while isinstance(root, ast.Attribute):
        root = root.value
    if (qualified or getattr(root, "id", None) or "").split(".")[0] in _NOT_OTHER_MODULES:
        return  # torch's own callables have their device slots in the tables (torch unbound: NPU005)
    named = _NAMED_FOR_DEVICES.search(called) is not None
    if not named and (
        qualified is None or (isinstance(func, ast.Attribute) and "." not in qualified)
    ):
        return  # a method of a value (logger.info("cuda")): not a function of another module
    slots = {id(argument) for _, argument, _ in slot_arguments(ctx, node)}
    for argument in node.args:
        if id(argument) in slots:
            continue
        for literal in slot_literals(argument):
            edited = literal_edit(ctx, literal, to_npu_device)
            if edited is None or not _EXACT_DEVICE.fullmatch(edited[0]):
                continue
            yield called, named, edited, literal


_BUILTIN_NAMES = frozenset(dir(builtins))
# Modules whose device parameters the tables list (or that take no devices).
_NOT_OTHER_MODULES = frozenset({"torch", "torch_npu", "os", "sys", "logging", "warnings", "re"})
