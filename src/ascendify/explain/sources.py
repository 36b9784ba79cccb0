"""What to read: the log files below the paths a user gives, each with the rank it belongs to.

Recognised, in any mix: a job's directory (``logs/worker-<n>/rank_<r>.log``, the ModelArts-named
links to them), an ``ascendify run --log-dir`` folder (``rank_<r>.log``, ``run_summary.json``,
``ascend/rank_<r>/`` plogs), ModelArts log downloads (``modelarts-job-*-proc-rank-<r>-device-<d>``
files, ``modelarts-job-*-worker-<n>.log`` node consoles), Ascend plog folders
(``ASCEND_PROCESS_LOG_PATH``, ``~/ascend/log/{debug,run}/plog``, ``device-<n>/``), and any other
text log, whose lines may name their rank (``[rank 3]: ...``, ``[rank3]:...``).

A file reached twice (a link and its target) is read once. Node consoles are read only when no
per-rank log was found, as they repeat what the ranks wrote.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ascendify.errors import AscendifyError

MAX_FILES = 20_000  # below one path: beyond this the input is not a job's logs
_RANK_LOG = re.compile(r"^rank_(\d+)\.log$")
_PROC_RANK = re.compile(r"-proc-rank-(\d+)-device-(\d+)")
_WORKER = re.compile(r"^modelarts-job-.*-worker-(\d+)\.log$")
_RANK_DIR = re.compile(r"^rank_(\d+)$")
_PLOG = re.compile(r"^(?:plog|device)-(\d+)_\d+\.log$")
_SKIPPED_SUFFIXES = (
    ".times", ".json", ".db", ".db-wal", ".db-shm", ".tsv", ".pt", ".bin", ".npy", ".py", ".pyc",
    ".sh", ".yaml", ".toml", ".csv",
)  # fmt: skip
SUMMARY_NAME = "run_summary.json"


class ExplainInputError(AscendifyError):
    """A path given to explain that cannot be read as logs."""


@dataclass(frozen=True)
class Source:
    path: Path
    rank: int | None  # None: the lines say (``[rank 3]:``) or the file is named instead
    kind: str  # rank | plog | worker | log

    @property
    def label(self) -> str:
        return f"rank {self.rank}" if self.rank is not None else self.path.name


@dataclass
class Inputs:
    sources: list[Source] = field(default_factory=list)
    summaries: list[dict[str, Any]] = field(default_factory=list)


def discover(paths: list[Path]) -> Inputs:
    """The log files and run summaries below ``paths``; a missing path is an input error."""
    inputs = Inputs()
    seen: set[str] = set()
    workers: list[Source] = []
    for path in paths:
        if not path.exists():
            raise ExplainInputError(f"{path}: no such file or directory")
        files = [path] if path.is_file() else _walk(_logs_of_job(path))
        for file in files:
            real = os.path.realpath(file)
            if real in seen:
                continue
            seen.add(real)
            if file.name == SUMMARY_NAME:
                summary = _summary(file)
                if summary is not None:
                    inputs.summaries.append(summary)
                continue
            source = classify(file)
            if source is None:
                continue
            (workers if source.kind == "worker" else inputs.sources).append(source)
    if not any(source.kind == "rank" for source in inputs.sources):
        inputs.sources.extend(workers)
    if not inputs.sources and not inputs.summaries:
        raise ExplainInputError(f"{', '.join(map(str, paths))}: no log files found")
    return inputs


def _logs_of_job(folder: Path) -> Path:
    """A job's directory is read through its ``logs/`` (not its code copy or staged data)."""
    logs = folder / "logs"
    return logs if (folder / "spec.json").is_file() and logs.is_dir() else folder


def classify(file: Path) -> Source | None:
    """The rank and kind of one file, or None for what is not a text log."""
    name = file.name
    if name.endswith(_SKIPPED_SUFFIXES) or not _is_text(file):
        return None
    match = _RANK_LOG.match(name) or _PROC_RANK.search(name)
    if match:
        return Source(file, int(match.group(1)), "rank")
    if _WORKER.match(name):
        return Source(file, None, "worker")
    rank = next(
        (int(m.group(1)) for part in reversed(file.parts[:-1]) if (m := _RANK_DIR.match(part))),
        None,
    )
    kind = "plog" if _PLOG.match(name) or "plog" in file.parts else "log"
    return Source(file, rank, kind)


def _walk(root: Path) -> list[Path]:
    found: list[Path] = []
    for directory, names, files in os.walk(root):  # links to folders are not followed
        names.sort()
        for name in sorted(files):
            found.append(Path(directory, name))
            if len(found) > MAX_FILES:
                raise ExplainInputError(f"{root}: more than {MAX_FILES} files: not a job's logs")
    return found


def _is_text(file: Path) -> bool:
    try:
        with file.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return b"\0" not in head


def _summary(file: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
