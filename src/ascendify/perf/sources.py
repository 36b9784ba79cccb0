"""Find every rank's trace under what ``ascendify perf`` is given, and read each into a summary.

A PATH is a run's log folder (``--profile`` wrote ``profile/rank_<r>/`` there, and its
``rank_<r>.log`` files say which ranks ran), a job id (the log folders of its nodes), a folder of
traces (kineto JSON files, ``*_ascend_pt`` folders, msprof-analyze's ``cluster_analysis_output``)
or one trace file. A rank whose trace is missing or unreadable becomes a :class:`Problem`; the
others are still read.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ascendify.errors import AscendifyError
from ascendify.perf.ascend import (
    CLUSTER_OUTPUT,
    OUTPUT,
    is_ascend_folder,
    is_cluster_folder,
    read_ascend,
    read_cluster,
)
from ascendify.perf.kineto import read_kineto
from ascendify.perf.model import Problem, RankProfile
from ascendify.perf.stream import open_trace
from ascendify.runfolder import RANK_LOG, profile_dir

if TYPE_CHECKING:
    from ascendify.jobs.layout import JobLayout

RANK_FOLDER = re.compile(r"rank_?(\d+)")
_TRACE_SUFFIXES = (".json", ".json.gz")
_SNIFF_CHARACTERS = 4096
_TRACE_MARKS = (b'"traceEvents"', b'"schemaVersion"', b'"ph"')  # kineto's first keys, an event's
# Files of Ascend's folders and msprof-analyze's that are JSON but not traces.
_NOT_TRACES = re.compile(r"communication|profiler_info|profiler_metadata|cluster_|summary|manifest")
# Reading order when one rank has several inputs: the first is read, the others noted.
_PREFERENCE = {"ascend": 0, "kineto": 1, "cluster": 2}


@dataclass
class Found:
    """What was read: one profile per rank, the problems, and notes about the whole input."""

    profiles: dict[int, RankProfile] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Input:
    path: Path
    format: str
    rank: int | None  # from the folder layout, when the file does not say


def gather(path_or_job: str) -> Found:
    """Every rank's profile under ``path_or_job``; an error only when nothing there is usable."""
    return gather_folders(*_locations(path_or_job))


def gather_folders(folders: list[Path], expected: set[int]) -> Found:
    """Every rank's profile in ``folders``, and a problem for each of ``expected`` without one."""
    inputs = [item for folder in folders for item in _inputs(folder)]
    if not inputs:
        where = ", ".join(str(folder) for folder in folders)
        raise AscendifyError(
            f"{where}: no profiler traces (kineto *.json, *_ascend_pt folders, "
            f"{CLUSTER_OUTPUT}); run the job with `ascendify run --profile`"
        )
    found = Found()
    for item in inputs:
        _read(item, found)
    for rank in sorted(expected - set(found.profiles)):
        if not any(problem.rank == rank for problem in found.problems):
            found.problems.append(
                Problem(
                    folders[0],
                    "no trace: the rank wrote none (did it reach the profiled steps?)",
                    rank,
                )
            )
    formats = {profile.format for profile in found.profiles.values()}
    if len(formats) > 1:
        by_format = {
            kind: ",".join(str(p.rank) for p in found.profiles.values() if p.format == kind)
            for kind in sorted(formats)
        }
        found.notes.append(
            "mixed formats ("
            + "; ".join(f"{k}: ranks {v}" for k, v in by_format.items())
            + "): each rank's split is measured on its own timeline, compare them with care"
        )
    return found


def _locations(path_or_job: str) -> tuple[list[Path], set[int]]:
    """The folders (or file) to search, and the ranks known to have run."""
    path = Path(path_or_job)
    if path.exists():
        if path.is_dir() and profile_dir(path).is_dir():
            return [profile_dir(path)], _ranks_logged(path)
        return [path], set()
    if os.sep in path_or_job or path_or_job.startswith("."):
        raise AscendifyError(f"{path_or_job}: no such file or folder")
    return _job_locations(path_or_job)


def _ranks_logged(log_dir: Path) -> set[int]:
    return {
        int(found.group(1))
        for child in log_dir.iterdir()
        if (found := RANK_LOG.fullmatch(child.name)) is not None
    }


def _job_locations(job_id: str) -> tuple[list[Path], set[int]]:
    from ascendify.jobs.layout import JobLayout
    from ascendify.jobs.store import JobStore, default_dir

    store = JobStore(default_dir())
    record = store.get(job_id)  # raises "no job ..." for an id that is not one
    present = job_profile_folders(JobLayout(store.job_dir(record.id), record.id), record.nodes)
    if not present:
        raise AscendifyError(
            f"job {record.id}: no profile in its logs; submit it with `ascendify job submit --profile`"
        )
    return present, set(range(record.nodes * record.cards))


def job_profile_folders(layout: JobLayout, nodes: int) -> list[Path]:
    """The profile folders a job's node launchers wrote (``--profile``), node by node."""
    folders = [profile_dir(layout.launcher_dir(node)) for node in range(nodes)]
    return [folder for folder in folders if folder.is_dir()]


def _inputs(root: Path) -> Iterator[_Input]:
    if root.is_file():
        yield _Input(root, "kineto", _rank_from_layout(root))
        return
    if is_cluster_folder(root):
        yield _Input(root, "cluster", None)
        return
    if is_ascend_folder(root):
        yield _Input(root, "ascend", None)
        return
    for folder, children, files in os.walk(root):
        here = Path(folder)
        for child in sorted(children):
            if is_ascend_folder(here / child):
                yield _Input(here / child, "ascend", None)
            elif child == CLUSTER_OUTPUT and is_cluster_folder(here / child):
                yield _Input(here / child, "cluster", None)
        children[:] = [
            c
            for c in sorted(children)
            if not is_ascend_folder(here / c) and c not in (CLUSTER_OUTPUT, OUTPUT)
        ]
        for name in sorted(files):
            if (
                name.endswith(_TRACE_SUFFIXES)
                and not _NOT_TRACES.search(name)
                and _looks_like_trace(here / name)
            ):
                yield _Input(here / name, "kineto", _rank_from_layout(here / name))


def _looks_like_trace(path: Path) -> bool:
    try:
        with open_trace(path) as handle:
            head = handle.read(_SNIFF_CHARACTERS)
    except (OSError, EOFError, zlib.error):
        return path.name.endswith(".gz")  # a broken archive: reported by the reader
    return any(mark in head for mark in _TRACE_MARKS) or head.lstrip().startswith(b"[")


def _rank_from_layout(path: Path) -> int | None:
    for name in (path.parent.name, path.name):
        found = RANK_FOLDER.search(name)
        if found:
            return int(found.group(1))
    return None


def _read(item: _Input, found: Found) -> None:
    readers: dict[str, Callable[[], list[RankProfile]]] = {
        "kineto": lambda: [read_kineto(item.path, item.rank)],
        "ascend": lambda: [read_ascend(item.path)],
        "cluster": lambda: read_cluster(item.path),
    }
    try:
        profiles = readers[item.format]()
    except (AscendifyError, OSError) as error:
        message = str(error).removeprefix(f"{item.path}: ")
        found.problems.append(Problem(item.path, message, item.rank))
        return
    for profile in profiles:
        _keep(profile, found)


def _keep(profile: RankProfile, found: Found) -> None:
    """One input per rank: Ascend's own before kineto's before the cluster's, else the newest."""
    held = found.profiles.get(profile.rank)
    if held is None:
        found.profiles[profile.rank] = profile
        return
    newer = _PREFERENCE[profile.format] < _PREFERENCE[held.format] or (
        profile.format == held.format and _mtime(profile.source) > _mtime(held.source)
    )
    kept, dropped = (profile, held) if newer else (held, profile)
    found.profiles[profile.rank] = kept
    found.notes.append(f"rank {profile.rank}: read {kept.source}, not {dropped.source}")


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
