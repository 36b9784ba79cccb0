"""``--tune [NAME,...|safe|all]``: the performance edits engineers porting models to Ascend make by
hand, as opt-in rules.

Each rule names its expected effect and where that comes from (the count among 18 models of
Ascend's ModelZoo that engineers ported by hand, and the published figures). ``safe`` rules change
nothing that is computed; ``unsafe`` ones change numerics or the data a step sees and are only
applied with ``--tune all`` or by name.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ascendify.errors import AscendifyError
from ascendify.migrate._imports import Import, Insertion, local_name_of
from ascendify.migrate._modes import Target
from ascendify.migrate._rule import (
    REGISTERED,
    Context,
    Edit,
    Finding,
    Mode,
    Operation,
    Rule,
    binding_trigger,
    checks,
    finishes,
)
from ascendify.migrate._settings import Settings
from ascendify.migrate.rules._ports import import_fused_optimizers
from ascendify.targets import Safety
from ascendify.targets.apis import HF32_FLAGS
from ascendify.targets.libraries import FUSED_OPTIMIZER_BY_NAME
from ascendify.targets.tuning import (
    ALLOW_INTERNAL_FORMAT,
    APEX_AMP_INITIALIZE,
    DATA_LOADERS,
    DDP,
    NPU_PROFILER_CONFIG,
    PROFILER_PROFILES,
    SET_COMPILE_MODE,
)

TUNE = Mode("tune", rank=7, when=lambda modes: bool(modes.tune))

SAFE_SET = "safe"  # every safe tuning rule: --tune alone
ALL_SET = "all"  # every tuning rule, the unsafe ones too


class TuneRule(Rule):
    """Base of the rules of --tune: each runs only when --tune names it (or its set)."""

    mode = TUNE
    targets = frozenset({Target.NPU})

    @classmethod
    def applies(cls, settings: Settings) -> bool:
        return super().applies(settings) and cls.code in settings.modes.tune


def tune_codes(spec: str) -> frozenset[str]:
    """The codes ``--tune`` names: ``safe``, ``all``, or rule names and codes separated by commas."""
    rules = [rule for rule in REGISTERED.rules.values() if rule.mode == TUNE]  # all in this module
    codes: set[str] = set()
    for word in filter(None, (part.strip() for part in spec.split(","))):
        if word == ALL_SET:
            codes.update(rule.code for rule in rules)
        elif word == SAFE_SET:
            codes.update(rule.code for rule in rules if rule.safety is Safety.SAFE)
        else:
            found = [rule.code for rule in rules if word in (rule.code, rule.name)]
            if not found:
                known = ", ".join(f"{rule.name} ({rule.code})" for rule in rules)
                raise AscendifyError(
                    f"--tune {word}: no tuning rule of that name; use safe, all or: {known}"
                )
            codes.update(found)
    if not codes:
        raise AscendifyError("--tune: name safe, all or tuning rules")
    return frozenset(codes)


class CompileMode(TuneRule):
    """What it does: inserts ``torch_npu.npu.set_compile_mode(jit_compile=False)`` after the imports
    of each entry script (a file with a ``__main__`` block or top-level statements that run).

    Why: with operator compilation on (the default before torch_npu 2.1's binary kernels), the first
    step compiles every operator for its shapes; Ascend's prebuilt binary kernels start at once.
    Engineers set it in 5 of 18 hand-ported ModelZoo models, msFmkTransplt's advice file recommends
    it for dynamic shapes, and a user measured a first run of about 600 s fall to about 40 s
    (ComfyUI PR 10050, SD1.5 on a 310P).

    Example: ``import torch_npu`` gets the line
    ``torch_npu.npu.set_compile_mode(jit_compile=False)`` after it.

    Fix safety: safe: the same operators compute the same results.
    """

    code = "TUN001"
    name = "compile-mode"
    summary = "set_compile_mode(jit_compile=False) at start (first step: ~600 s -> ~40 s)"
    safety = Safety.SAFE
    # An entry script of a GPU project has CUDA idioms (other rules' triggers); one migrated already
    # names torch_npu.
    trigger_words = (b"torch_npu",)


class InternalFormat(TuneRule):
    """What it does: inserts ``torch_npu.npu.config.allow_internal_format = False`` after the
    imports of each entry script.

    Why: with internal formats allowed, torch_npu converts tensors to private layouts (such as
    NC1HWC0) and back between operators; engineers turned it off in 2 of 18 hand-ported ModelZoo
    models, where the conversions cost more than they saved.

    Example: ``import torch_npu`` gets the line
    ``torch_npu.npu.config.allow_internal_format = False`` after it.

    Fix safety: safe: only the memory layout changes, not the values.
    """

    code = "TUN002"
    name = "internal-format"
    summary = "allow_internal_format = False at start (no layout conversions between operators)"
    safety = Safety.SAFE
    trigger_words = CompileMode.trigger_words


class Hf32(TuneRule):
    """What it does: after each line that sets a TF32 switch (``torch.backends.cuda.matmul.allow_tf32``,
    ``torch.backends.cudnn.allow_tf32``), inserts the same setting of the NPU's HF32 switch
    (``torch_npu.npu.matmul.allow_hf32``, ``torch_npu.npu.conv.allow_hf32``).

    Why: the original chose to trade float32 precision for speed on the GPU; the NPU's switches do
    the same for its cube units and the CUDA ones do nothing there (2 of 18 hand-ported ModelZoo
    models set HF32).

    Example: ``torch.backends.cuda.matmul.allow_tf32 = True`` is followed by
    ``torch_npu.npu.matmul.allow_hf32 = True``.

    Fix safety: safe: it keeps the precision the original asked for (NPU908 replaces the TF32
    line instead).
    """

    code = "TUN003"
    name = "hf32"
    summary = "HF32 switches set as the original's TF32 switches"
    safety = Safety.SAFE
    triggers = (b"allow_tf32",)


class ProfilerLevel(TuneRule):
    """What it does: gives a profiler without options of its own (``torch.profiler.profile``,
    which the migration moves to ``torch_npu.profiler.profile``) torch_npu's
    ``experimental_config`` at level 1 with the AI Core pipe-utilisation metrics.

    Why: at its default level the NPU profiler records no per-operator AI Core data, which is
    what shows an idle NPU; engineers set up the NPU profiler in 9 of 18 hand-ported ModelZoo
    models.

    Example: ``torch.profiler.profile(activities=acts)`` becomes
    ``torch_npu.profiler.profile(activities=acts, experimental_config=torch_npu.profiler.
    _ExperimentalConfig(profiler_level=torch_npu.profiler.ProfilerLevel.Level1,
    aic_metrics=torch_npu.profiler.AiCMetrics.PipeUtilization))``.

    Fix safety: safe: only what the profiler records changes (and its cost in profiled steps).
    """

    code = "TUN004"
    name = "profiler-level"
    summary = "NPU profiler at level 1 with AI Core metrics (shows idle NPU time per operator)"
    safety = Safety.SAFE
    triggers = (b"profiler",)


class FusedOptimizer(TuneRule):
    """What it does: replaces ``torch.optim.Adam``, ``AdamW``, ``SGD``, ``RMSprop`` and ``Adadelta``
    with torch_npu's fused optimizers (``torch_npu.optim.NpuFusedAdamW``, ...) when every argument
    passed is one the fused constructor takes.

    Why: the fused optimizers update all parameters in a few kernels instead of several per
    parameter; engineers made this edit in 12 of 18 hand-ported ModelZoo models, and
    msFmkTransplt's advice says AdamW's "performance improved significantly" (its memory use grows
    by 70%).

    Example: ``torch.optim.AdamW(model.parameters(), lr=1e-3)`` becomes
    ``torch_npu.optim.NpuFusedAdamW(model.parameters(), lr=1e-3)``.

    Fix safety: unsafe: the fused kernels round differently and hold parameters and gradients in
    combined buffers (``zero_grad`` keeps gradients as zeros).
    """

    code = "TUN101"
    name = "fused-optimizer"
    summary = (
        "torch.optim optimizer -> torch_npu.optim.NpuFused* (fewer kernels; memory +70% for AdamW)"
    )
    safety = Safety.UNSAFE
    triggers = (b"optim",)


class DdpBroadcastBuffers(TuneRule):
    """What it does: adds ``broadcast_buffers=False`` to ``DistributedDataParallel(...)`` in a
    file that registers no buffers of its own (``register_buffer``), so the buffers are batch-norm
    statistics.

    Why: by default DDP broadcasts rank 0's buffers before every forward pass, one more collective
    per step; engineers turned it off in 11 of 18 hand-ported ModelZoo models, and msFmkTransplt's
    old tips ask for it.

    Example: ``DDP(model, device_ids=[rank])`` becomes
    ``DDP(model, device_ids=[rank], broadcast_buffers=False)``.

    Fix safety: unsafe: each rank keeps its own running statistics, so evaluation on a rank other
    than 0 sees other statistics.
    """

    code = "TUN102"
    name = "ddp-broadcast-buffers"
    summary = "DDP broadcast_buffers=False (one collective less per step)"
    safety = Safety.UNSAFE
    triggers = (b"DistributedDataParallel", b"DDP")


class DropLast(TuneRule):
    """What it does: adds ``drop_last=True`` to a training ``DataLoader(...)`` (one that shuffles
    or takes a sampler) that does not say.

    Why: a last, smaller batch has a new shape, and the NPU compiles (or picks) kernels for every
    new shape; engineers set it in 9 of 18 hand-ported ModelZoo models.

    Example: ``DataLoader(data, batch_size=32, shuffle=True)`` becomes
    ``DataLoader(data, batch_size=32, shuffle=True, drop_last=True)``.

    Fix safety: unsafe: up to a batch of samples per epoch is not trained on.
    """

    code = "TUN103"
    name = "drop-last"
    summary = "training DataLoader drop_last=True (no new shape in the last step)"
    safety = Safety.UNSAFE
    triggers = (b"DataLoader",)


class PersistentWorkers(TuneRule):
    """What it does: adds ``persistent_workers=True`` to a ``DataLoader(...)`` that starts worker
    processes (``num_workers`` a number above 0 written in place) and does not say; a
    ``num_workers`` that is a variable is reported (TUN107).

    Why: a loader otherwise starts its workers again every epoch, and the NPU waits for the first
    batch; 4 of 18 hand-ported ModelZoo models use a multi-epoch loader that keeps them.

    Example: ``DataLoader(data, num_workers=8)`` becomes
    ``DataLoader(data, num_workers=8, persistent_workers=True)``.

    Fix safety: unsafe: workers keep their state (a dataset's own random state, files it opened)
    from one epoch to the next.
    """

    code = "TUN104"
    name = "persistent-workers"
    summary = "DataLoader persistent_workers=True (workers kept between epochs)"
    safety = Safety.UNSAFE
    triggers = (b"num_workers",)


class PersistentWorkersUnknown(TuneRule):
    """What it does: reports a ``DataLoader(...)`` whose ``num_workers`` is not a number written in
    place (``num_workers=args.workers``) where TUN104 runs, instead of adding
    ``persistent_workers=True``.

    Why: ``persistent_workers=True`` with ``num_workers=0`` raises ValueError when the loader is
    made, and a variable can be 0 (``--workers 0`` is how scripts are debugged).

    Example: ``DataLoader(data, num_workers=args.workers)`` is left and reported; write
    ``persistent_workers=args.workers > 0``.

    Fix safety: report only.
    """

    code = "TUN107"
    name = "persistent-workers-unknown"
    summary = "DataLoader num_workers that may be 0: persistent_workers left to the user"
    safety = Safety.REPORT_ONLY
    operation = Operation.ADVICE
    triggers = (b"num_workers",)

    @classmethod
    def applies(cls, settings: Settings) -> bool:
        return super().applies(settings) or (
            super(TuneRule, cls).applies(settings) and PersistentWorkers.code in settings.modes.tune
        )


@binding_trigger
def _tuned_name(qualified: str) -> bool:
    """``from torch.optim import AdamW``: lines calling ``AdamW(...)`` alone are visited."""
    return (
        qualified in FUSED_OPTIMIZER_BY_NAME
        or qualified in DATA_LOADERS
        or qualified in PROFILER_PROFILES
        or qualified == DDP
    )


class ApexCombineGrad(TuneRule):
    """What it does: adds ``combine_grad=True`` to ``apex.amp.initialize(...)``.

    Why: Ascend's apex build then keeps all gradients in one buffer, so unscaling, clipping and
    the all-reduce work on one tensor instead of one per parameter; engineers set it in 11 of 18
    hand-ported ModelZoo models.

    Example: ``amp.initialize(model, optimizer, opt_level="O2")`` becomes
    ``amp.initialize(model, optimizer, opt_level="O2", combine_grad=True)``.

    Fix safety: unsafe: it needs Ascend's apex build (NVIDIA's apex has no such option) and a fused
    optimizer, and combined buffers change the order of floating-point sums.
    """

    code = "TUN105"
    name = "apex-combine-grad"
    summary = "apex amp.initialize combine_grad=True (one gradient buffer; Ascend's apex)"
    safety = Safety.UNSAFE
    triggers = (b"initialize",)


class ApexO2(TuneRule):
    """What it does: raises ``opt_level="O1"`` of ``apex.amp.initialize(...)`` to ``"O2"``.

    Why: O2 keeps the model in float16 with float32 master weights, so no operator is cast on the
    fly; engineers chose O2 in 8 of 18 hand-ported ModelZoo models.

    Example: ``amp.initialize(model, optimizer, opt_level="O1")`` becomes
    ``amp.initialize(model, optimizer, opt_level="O2")``.

    Fix safety: unsafe: more of the computation runs in float16.
    """

    code = "TUN106"
    name = "apex-o2"
    summary = "apex amp opt_level O1 -> O2 (float16 model, float32 master weights)"
    safety = Safety.UNSAFE
    triggers = (b"initialize",)


def _is_entry_script(module: ast.Module) -> bool:
    """A file run as a program: a ``__main__`` block, or statements at its top that do something."""
    for statement in module.body:
        if isinstance(statement, ast.If) and "__main__" in ast.dump(statement.test):
            return True
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            return True
        if isinstance(statement, ast.For | ast.While | ast.With):
            return True
    return False


_START_LINES: dict[type[Rule], tuple[str, str]] = {
    CompileMode: (SET_COMPILE_MODE, f"{SET_COMPILE_MODE}(jit_compile=False)"),
    InternalFormat: (ALLOW_INTERNAL_FORMAT, f"{ALLOW_INTERNAL_FORMAT} = False"),
}


@finishes(rules=tuple(_START_LINES))
def insert_start_lines(
    ctx: Context, module: ast.Module, findings: list[Finding]
) -> Iterator[Insertion]:
    if local_name_of(ctx, "torch") is None or not _is_entry_script(module):
        return
    for rule, (name, line) in _START_LINES.items():
        setting = name.rpartition(".")[2]
        if rule in ctx.rules and setting not in ctx.source.text:
            yield Insertion(rule, (Import("torch_npu"),), code=(line,), message=line)


@checks(ast.Assign, rules=(Hf32,))
def check_tf32(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Assign)
    if len(node.targets) != 1 or not isinstance(node.value, ast.Constant):
        return
    npu = HF32_FLAGS.get(ctx.names.qualified_name(node.targets[0]) or "")
    if npu is None or not ctx.facts.has(npu) or npu in ctx.source.text:
        return
    statement = ctx.source.line(node.lineno)
    indent = statement[: len(statement) - len(statement.lstrip())]
    _, end = ctx.span(node)
    rest = ctx.source.text[end:].partition("\n")[0]
    if len(indent) != node.col_offset or node.end_lineno != node.lineno or rest.strip():
        return  # not a statement alone on its line
    line = f"{npu} = {ctx.segment(node.value)}"
    yield Hf32.finding(node, line, Edit(end, end, f"{ctx.source.newline()}{indent}{line}"))


def _keyword(node: ast.Call, name: str) -> ast.keyword | None:
    """The keyword argument ``name`` of a call, if given."""
    return next((k for k in node.keywords if k.arg == name), None)


def _unpacked(node: ast.Call) -> bool:
    """Arguments passed with * or **: which ones are given is not known."""
    starred = any(isinstance(argument, ast.Starred) for argument in node.args)
    return starred or any(keyword.arg is None for keyword in node.keywords)


@checks(ast.Call, rules=(FusedOptimizer,))
def check_optimizer(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    qualified = ctx.names.qualified_name(node.func)
    fused = FUSED_OPTIMIZER_BY_NAME.get(qualified or "")
    if fused is None or _unpacked(node) or not ctx.facts.has(fused.npu):
        return
    passed = {*fused.parameters[: len(node.args)], *(k.arg for k in node.keywords)}
    if len(node.args) > len(fused.parameters) or not passed <= set(fused.parameters):
        return  # an argument (foreach=, fused=, maximize=, ...) the fused optimizer lacks
    if not set(fused.required) <= passed:
        return
    message = f"{qualified} -> {fused.npu} (fewer kernels per step)"
    yield FusedOptimizer.finding(node.func, message, ctx.replace(node.func, fused.npu))


@finishes(rules=(FusedOptimizer,))
def import_optim(ctx: Context, module: ast.Module, findings: list[Finding]) -> Iterator[Insertion]:
    return import_fused_optimizers(FusedOptimizer, findings)


def _add_keyword(ctx: Context, node: ast.Call, text: str) -> Edit:
    """An edit adding ``text`` after the call's last argument (calls here have arguments)."""
    at = max(ctx.span(argument)[1] for argument in [*node.args, *node.keywords])
    return Edit(at, at, ", " + text)


@checks(ast.Call, rules=(ProfilerLevel, ApexCombineGrad, ApexO2))
def check_settings(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    qualified = ctx.names.qualified_name(node.func)
    if _unpacked(node) or qualified not in (*PROFILER_PROFILES, APEX_AMP_INITIALIZE):
        return
    if qualified in PROFILER_PROFILES and _keyword(node, "experimental_config") is None:
        option = f"experimental_config={NPU_PROFILER_CONFIG}"
        edit = _add_keyword(ctx, node, option) if node.args or node.keywords else None
        if edit is None:
            _, end = ctx.span(node)
            edit = Edit(end - 1, end - 1, option)
        yield ProfilerLevel.finding(node, f"{qualified}(..., experimental_config=level 1)", edit)
    if qualified != APEX_AMP_INITIALIZE:
        return
    if _keyword(node, "combine_grad") is None and node.args:
        text = "combine_grad=True"
        yield ApexCombineGrad.finding(
            node, f"{qualified}(..., {text})", _add_keyword(ctx, node, text)
        )
    level = _keyword(node, "opt_level")
    if level is not None and isinstance(level.value, ast.Constant) and level.value.value == "O1":
        quote = ctx.segment(level.value)[0]
        edit = ctx.replace(level.value, f"{quote}O2{quote}")
        yield ApexO2.finding(level, "opt_level O1 -> O2", edit)


@checks(
    ast.Call, rules=(DdpBroadcastBuffers, DropLast, PersistentWorkers, PersistentWorkersUnknown)
)
def check_call_options(ctx: Context, node: ast.AST, parent: ast.AST | None) -> Iterator[Finding]:
    assert isinstance(node, ast.Call)
    qualified = ctx.names.qualified_name(node.func)
    if (qualified != DDP and qualified not in DATA_LOADERS) or _unpacked(node) or not node.args:
        return
    wanted: list[tuple[type[Rule], str]] = []
    if qualified == DDP and "register_buffer" not in ctx.source.text:
        wanted.append((DdpBroadcastBuffers, "broadcast_buffers=False"))
    if qualified in DATA_LOADERS:
        shuffle = _keyword(node, "shuffle")
        shuffled = shuffle is not None and not (
            isinstance(shuffle.value, ast.Constant) and not shuffle.value.value
        )
        if (shuffled or _keyword(node, "sampler") is not None) and len(node.args) <= 1:
            wanted.append((DropLast, "drop_last=True"))
        workers = _keyword(node, "num_workers")
        if workers is not None and _keyword(node, "persistent_workers") is None:
            count = workers.value
            if isinstance(count, ast.Constant) and isinstance(count.value, int):
                if count.value > 0:
                    wanted.append((PersistentWorkers, "persistent_workers=True"))
            elif PersistentWorkersUnknown in ctx.rules:
                text = ctx.segment(count)
                message = (
                    f"num_workers={text} may be 0, where persistent_workers=True raises: "
                    f"write persistent_workers={text} > 0"
                )
                yield PersistentWorkersUnknown.finding(node, message)
    for rule, text in wanted:
        if rule in ctx.rules and _keyword(node, text.partition("=")[0]) is None:
            # Insertions at one offset are applied in the order they are found.
            yield rule.finding(node, f"{qualified}(..., {text})", _add_keyword(ctx, node, text))
