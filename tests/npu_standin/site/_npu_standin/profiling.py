"""torch_npu.profiler as torch's own profiler of the CPU: the npu activity has nothing to record.

Profiling never changes results; what the stand-in keeps is the API shape, so code that profiles
NPU training runs, writes torch's CPU traces, and steps through its schedule as it would on an NPU.
"""

from __future__ import annotations

import enum
import os
import socket
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import torch

from _npu_standin.strict import AsIs, OpaqueConstants


class ProfilerActivity(enum.Enum):
    CPU = "CPU"
    NPU = "NPU"


def host_activities(
    activities: Iterable[ProfilerActivity] | None,
) -> list[torch.profiler.ProfilerActivity] | None:
    """The activities torch can record here: the CPU's (the npu one has no device to watch)."""
    if activities is None:
        return None
    return [torch.profiler.ProfilerActivity.CPU for a in activities if a is ProfilerActivity.CPU]


class Profile(torch.profiler.profile):
    def __init__(
        self,
        *,
        activities: Iterable[ProfilerActivity] | None = None,
        experimental_config: Any = None,
        use_cuda: bool | None = None,
        **options: Any,
    ) -> None:
        super().__init__(activities=host_activities(activities), **options)


class Schedule:
    def __init__(  # noqa: PLR0917 (the wheel's signature)
        self,
        wait: int,
        active: int,
        warmup: int = 0,
        repeat: int = 0,
        skip_first: int = 0,
        skip_first_wait: int = 0,
    ) -> None:
        self.actions = torch.profiler.schedule(
            wait=wait,
            warmup=warmup,
            active=active,
            repeat=repeat,
            skip_first=skip_first,
            skip_first_wait=skip_first_wait,
        )

    def __call__(self, step: int) -> torch.profiler.ProfilerAction:
        action: torch.profiler.ProfilerAction = self.actions(step)
        return action


def tensorboard_trace_handler(
    dir_name: str | None = None,
    worker_name: str | None = None,
    analyse_flag: bool = True,
    async_mode: bool = False,
) -> Callable[[torch.profiler.profile], None]:
    """Writes torch's CPU trace of each finished cycle into ``dir_name``.

    torch's own handler passes arguments torch_npu's ``export_chrome_trace`` does not take, so
    the trace is exported with torch's method directly."""
    directory = Path(dir_name or ".")
    worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"

    def handler(profiler: torch.profiler.profile) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        trace = directory / f"{worker}.{time.time_ns()}.pt.trace.json"
        torch.profiler.profile.export_chrome_trace(profiler, str(trace))

    return handler


class ExperimentalConfig:
    """NPU profiler levels and metrics: there is no NPU profiler for them to configure."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.options = (args, kwargs)


PROFILER = "torch_npu.profiler"
EMULATED_PROFILER: dict[str, Any] = {
    f"{PROFILER}.ProfilerActivity": ProfilerActivity,
    f"{PROFILER}.profiler.profile": Profile,
    f"{PROFILER}.profiler.tensorboard_trace_handler": tensorboard_trace_handler,
    f"{PROFILER}.scheduler.Schedule": Schedule,
    f"{PROFILER}.scheduler.ProfilerAction": AsIs(torch.profiler.ProfilerAction),
    f"{PROFILER}.profiler_interface.supported_activities": lambda: list(ProfilerActivity),
    f"{PROFILER}.experimental_config._ExperimentalConfig": ExperimentalConfig,
    **{
        f"{PROFILER}.experimental_config.{name}": OpaqueConstants
        for name in ("ProfilerLevel", "AiCMetrics", "ExportType", "HostSystem")
    },
}
