"""The step profiler ``--profile`` arms in every rank (imports torch; armed by the start hook).

Steps end at ``optimizer.step()``, counted from 0 as ``compare dump`` counts them. Nothing runs
before the first profiled step but a counter in a global optimizer hook; at the end of step
FIRST - 1 the profiler starts (torch.profiler: CPU, and CUDA where there is a device;
torch_npu.profiler at Level1 on an Ascend host) with module hooks that put each top-level
module's call (the model, and each of its direct children) in a named range. After step LAST the
trace is written to ``<profile dir>/rank_<r>/`` and the module hooks are removed: the steps after
cost one flag check in the optimizer hook. A program that ends inside the profiled steps still writes what was recorded.
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils.hooks import RemovableHandle

from ascendify.perf.model import MODULE_RANGE
from ascendify.perf.starthook import DIR_VARIABLE, STEPS_VARIABLE, parse_steps
from ascendify.runfolder import rank_name

# Wrappers whose inner model is the one the user wrote (DDP's .module, torch.compile's _orig_mod).
WRAPPED = {"DistributedDataParallel": "module", "DataParallel": "module", "OptimizedModule": "_orig_mod"}  # fmt: skip


class ModuleRanges:
    """A profiler range around each call of a top-level module and of its direct children."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}
        self.open: list[tuple[int, Any]] = []
        self.depth = 0
        self.handles: list[RemovableHandle] = []

    def install(self) -> None:
        from torch.nn.modules import module as hooks

        self.handles = [
            hooks.register_module_forward_pre_hook(self._before),
            hooks.register_module_forward_hook(self._after, always_call=True),
        ]

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()
        while self.open:
            self.open.pop()[1].__exit__(None, None, None)

    def _before(self, module: nn.Module, _: Any) -> None:
        if self.depth == 0 and id(module) not in self.names:
            self._index(module)
        self.depth += 1
        name = self.names.get(id(module))
        if name is not None:
            scope = torch.autograd.profiler.record_function(MODULE_RANGE + name)
            scope.__enter__()  # type: ignore[no-untyped-call]
            self.open.append((id(module), scope))

    def _after(self, module: nn.Module, *_: Any) -> None:
        self.depth = max(self.depth - 1, 0)
        if self.open and self.open[-1][0] == id(module):
            self.open.pop()[1].__exit__(None, None, None)

    def _index(self, root: nn.Module) -> None:
        inner = root
        while type(inner).__name__ in WRAPPED and isinstance(
            getattr(inner, WRAPPED[type(inner).__name__], None), nn.Module
        ):
            inner = getattr(inner, WRAPPED[type(inner).__name__])
        label = type(inner).__name__
        self.names[id(root)] = label
        for name, child in inner.named_children():
            self.names.setdefault(id(child), f"{label}.{name}")


class StepProfiler:
    def __init__(self, first: int, last: int, folder: Path, rank: int, attempt: int) -> None:
        self.first, self.last = first, last
        self.folder, self.rank, self.attempt = folder, rank, attempt
        self.owner = os.getpid()  # forked workers inherit the hooks; only the owner profiles
        self.step = 0
        self.profiler: Any = None
        self.ranges = ModuleRanges()
        self.done = False

    def arm(self) -> None:
        from torch.optim import optimizer as hooks

        hooks.register_optimizer_step_post_hook(self._after_optimizer_step)
        atexit.register(self.finish)
        if self.first == 0:
            self._start()

    def _after_optimizer_step(self, *_: Any) -> None:
        if os.getpid() != self.owner or self.done:
            return
        self.step += 1
        if self.profiler is None:
            if self.step == self.first:
                self._start()
            return
        self.profiler.step()
        if self.step > self.last:
            self.finish()

    def _schedule(self, step: int) -> Any:
        from torch.profiler import ProfilerAction

        if step < self.last:
            return ProfilerAction.RECORD
        return ProfilerAction.RECORD_AND_SAVE if step == self.last else ProfilerAction.NONE

    def _start(self) -> None:
        out = self.folder / rank_name(self.rank)
        out.mkdir(parents=True, exist_ok=True)
        self.profiler = (
            _npu_profiler(self._schedule, out) if _on_npu() else self._torch_profiler(out)
        )
        self.profiler.step_num = self.first  # ProfilerStep#N: N is the program's step
        self.profiler.current_action = self._schedule(self.first)
        self.ranges.install()
        self.profiler.start()

    def _torch_profiler(self, out: Path) -> Any:
        from torch.profiler import ProfilerActivity, profile

        activities = [ProfilerActivity.CPU]
        if torch.cuda.is_available():
            activities.append(ProfilerActivity.CUDA)
        path = out / f"attempt_{self.attempt}.pt.trace.json"
        return profile(
            activities=activities,
            schedule=self._schedule,
            on_trace_ready=lambda done: done.export_chrome_trace(str(path)),
        )

    def finish(self) -> None:
        """After the last profiled step, or at the program's end: write the trace, remove hooks."""
        if self.done or os.getpid() != self.owner:
            return
        self.done = True
        # The optimizer hook stays, a flag check per step: finish() runs inside it, and removing
        # a hook while torch iterates the hooks breaks the iteration for the hooks after it.
        self.ranges.remove()
        if self.profiler is not None:
            self.profiler.stop()
            self.profiler = None


def _on_npu() -> bool:
    import importlib.util

    if importlib.util.find_spec("torch_npu") is None:
        return False
    from ascendify.auto._npu import npu_device_count

    return npu_device_count() > 0


def _npu_profiler(schedule: Callable[[int], Any], out: Path) -> Any:
    """torch_npu's profiler at Level1 (what cluster analysis needs: communication operators,
    bandwidth, the communication matrix), writing ``*_ascend_pt`` into ``out``. Runs on an
    Ascend host only."""
    from ascendify.auto._npu import import_torch_npu

    torch_npu = import_torch_npu()
    npu_profiler = torch_npu.profiler
    config = npu_profiler._ExperimentalConfig(profiler_level=npu_profiler.ProfilerLevel.Level1)
    return npu_profiler.profile(
        activities=[npu_profiler.ProfilerActivity.CPU, npu_profiler.ProfilerActivity.NPU],
        schedule=schedule,
        on_trace_ready=npu_profiler.tensorboard_trace_handler(str(out)),
        experimental_config=config,
    )


def arm() -> StepProfiler:
    first, last = parse_steps(os.environ[STEPS_VARIABLE])
    profiler = StepProfiler(
        first,
        last,
        Path(os.environ[DIR_VARIABLE]),
        rank=int(os.environ.get("RANK", "0")),
        attempt=int(os.environ.get("ASCENDIFY_RESTART_COUNT", "0")),
    )
    profiler.arm()
    return profiler
