"""Resource curves of a running job: CPU and memory of each node's and each rank's process tree,
of the host, and accelerator utilisation and memory where a tool can read them.

The job runner samples every :data:`INTERVAL` seconds into ``resources.tsv`` beside the metrics,
in the metrics file's format (:func:`~ascendify.jobs.metrics.append_points`), as series:

- ``cpu`` and ``pss`` of rank ``r`` (its process tree: % of one core, MiB of proportional set size:
  a page shared by forked children counts once in all, not once per process as resident sizes do);
- ``node<N>/cpu`` and ``node<N>/pss`` (rank -1): node N's whole tree, launcher included;
- ``host/cpu`` (% of all cores) and ``host/mem`` (MiB used), rank -1;
- ``gpu<i>/util`` and ``gpu<i>/mem`` through NVML (the ``nvidia-ml-py`` binding), or
  ``npu<i>/util`` and ``npu<i>/mem%`` (HBM in use) through ``npu-smi``, rank -1. Where neither can be read,
  nothing is invented: :func:`accelerator_reader` says why.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import psutil

from ascendify.device_tools import npu_smi_ids
from ascendify.jobs.metrics import Point, append_points

INTERVAL = 3.0  # seconds between samples: a bounded rate whatever the job's size
MIB = 1 << 20
RANK_VARIABLES = ("RANK", "LOCAL_RANK")  # a rank's process has both (a node agent has neither)

Accelerators = Callable[[], list[tuple[str, float]]]  # -> [(series name, value)]


def accelerator_reader() -> tuple[Accelerators | None, str]:
    """A reader of the accelerators' utilisation and memory, and what it reads (or why none)."""
    nvml, why_not_nvml = _nvml()
    if nvml is not None:
        return nvml, "GPU utilisation and memory through NVML"
    if shutil.which("npu-smi"):
        listed = npu_smi_ids(os.environ)  # the same listing the launcher reads
        if listed is not None:
            ids = listed[0]
            return lambda: _npu_smi(ids), "NPU utilisation and memory through npu-smi"
    return None, f"no accelerator series: no npu-smi on PATH, and {why_not_nvml}"


def _nvml() -> tuple[Accelerators | None, str]:
    try:
        import pynvml  # type: ignore[import-not-found,unused-ignore]  # nvidia-ml-py, optional
    except ImportError:
        return None, "NVML is not read (pip install nvidia-ml-py)"
    try:
        pynvml.nvmlInit()
        handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
    except pynvml.NVMLError as error:
        return None, f"NVML cannot be read: {error}"

    def read() -> list[tuple[str, float]]:
        found = []
        for index, handle in enumerate(handles):
            with contextlib.suppress(pynvml.NVMLError):
                found.append(
                    (f"gpu{index}/util", float(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu))
                )
                found.append((f"gpu{index}/mem", pynvml.nvmlDeviceGetMemoryInfo(handle).used / MIB))
        return found

    return read, ""


# npu-smi info -t usages -i ID prints "Aicore Usage Rate(%)  : 35" and "HBM Usage Rate(%)  : 12".
_NPU_USAGE = re.compile(rb"(Aicore|HBM) Usage Rate\(%\)\s*:\s*(\d+(?:\.\d+)?)")


def _npu_smi(ids: list[str]) -> list[tuple[str, float]]:
    found: list[tuple[str, float]] = []
    for npu in ids:
        usages = dict(_NPU_USAGE.findall(_run(["npu-smi", "info", "-t", "usages", "-i", npu])))
        if b"Aicore" in usages:
            found.append((f"npu{npu}/util", float(usages[b"Aicore"])))
        if b"HBM" in usages:
            found.append((f"npu{npu}/mem%", float(usages[b"HBM"])))
    return found


def _run(argv: list[str]) -> bytes:
    try:
        return subprocess.run(argv, capture_output=True, timeout=10, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return b""


class ResourceSampler:
    """Samples the process trees of a job's nodes (``node_pids()``: node -> its step's pid)."""

    def __init__(
        self,
        node_pids: Callable[[], dict[int, int]],
        accelerators: Accelerators | None = None,
    ) -> None:
        self._node_pids = node_pids
        self._accelerators = accelerators
        self._processes: dict[int, psutil.Process] = {}  # kept: cpu_percent is since the last call
        self._ranks: dict[int, int | None] = {}  # pid -> its rank (read once from its environ)
        psutil.cpu_percent(None)

    def sample(self, now: float) -> list[Point]:
        points: list[Point] = []
        seen: set[int] = set()
        for node, pid in sorted(self._node_pids().items()):
            node_cpu = node_mem = 0.0
            per_rank: dict[int, list[float]] = {}
            for process in self._tree(pid):
                seen.add(process.pid)
                try:
                    with process.oneshot():
                        cpu, mem = process.cpu_percent(None), _proportional_mib(process)
                except psutil.Error:
                    continue
                node_cpu += cpu
                node_mem += mem
                rank = self._rank(process)
                if rank is not None:
                    totals = per_rank.setdefault(rank, [0.0, 0.0])
                    totals[0] += cpu
                    totals[1] += mem
            points.append(Point(-1, f"node{node}/cpu", None, round(node_cpu, 1), now))
            points.append(Point(-1, f"node{node}/pss", None, round(node_mem, 1), now))
            for rank, (cpu, mem) in sorted(per_rank.items()):
                points.append(Point(rank, "cpu", None, round(cpu, 1), now))
                points.append(Point(rank, "pss", None, round(mem, 1), now))
        for gone in set(self._processes) - seen:
            del self._processes[gone]
            self._ranks.pop(gone, None)
        points.append(Point(-1, "host/cpu", None, psutil.cpu_percent(None), now))
        points.append(Point(-1, "host/mem", None, round(psutil.virtual_memory().used / MIB), now))
        if self._accelerators is not None:
            points.extend(Point(-1, name, None, value, now) for name, value in self._accelerators())
        return points

    def _tree(self, pid: int) -> Iterable[psutil.Process]:
        """The processes of ``pid``'s tree, the same objects from sample to sample."""
        try:
            root = psutil.Process(pid)
            found = [root, *root.children(recursive=True)]
        except psutil.Error:
            return []
        return [self._processes.setdefault(process.pid, process) for process in found]

    def _rank(self, process: psutil.Process) -> int | None:
        if process.pid not in self._ranks:
            rank = None
            with contextlib.suppress(psutil.Error, ValueError):
                environ = process.environ()
                if all(name in environ for name in RANK_VARIABLES):
                    rank = int(environ["RANK"])
            self._ranks[process.pid] = rank
        return self._ranks[process.pid]


def _proportional_mib(process: psutil.Process) -> float:
    """The process's proportional set size (``/proc/PID/smaps_rollup``): each shared page divided
    among the processes that map it, so a tree's sum counts it once. Resident size where the
    kernel gives no PSS."""
    try:
        return float(process.memory_full_info().pss) / MIB
    except (AttributeError, psutil.AccessDenied):
        return float(process.memory_info().rss) / MIB


def run_sampler(
    sampler: ResourceSampler, path: Path, ended: threading.Event, interval: float = INTERVAL
) -> None:
    """Append a sample to ``path`` every ``interval`` seconds until ``ended`` is set."""
    while not ended.wait(interval):
        with contextlib.suppress(OSError):  # a full disk loses samples, not the job
            append_points(path, sampler.sample(time.time()))
