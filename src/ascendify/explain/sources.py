"""What to read: the log files below the paths a user gives, each with the rank it belongs to.

Recognised, in any mix: a job's directory (``logs/worker-<n>/rank_<r>.log``, the ModelArts-named
links to them), an ``ascendify run --log-dir`` folder (``rank_<r>.log``, ``run_summary.json``,
``ascend/rank_<r>/`` plogs), ModelArts log downloads (``modelarts-job-*-proc-rank-<r>-device-<d>``
files, ``modelarts-job-*-worker-<n>.log`` node consoles), Ascend plog folders
(``ASCEND_PROCESS_LOG_PATH``, ``~/ascend/log/{debug,run}/plog``, ``device-<n>/``), and any other
text log, whose lines may name their rank (``[rank 3]: ...``, ``[rank3]:...``).

A file reached twice (a link and its target) is read once. Node consoles are read only when no
per-rank log was found, as they repeat what the ranks wrote.

What a rank wrote is not trusted: only regular files are opened (links are followed, as a job's
directory links to its logs, but a FIFO, a device such as ``/dev/zero`` or a socket is skipped,
never opened for a read that blocks or never ends), summaries are read within a size limit, folders
nested deeper than :data:`MAX_DEPTH` end the reading with an input error, and every file left out
for such a reason is listed in :attr:`Inputs.skipped` with the reason, so that the verdict says
what it did not read. A log whose rank is known is read even when its head holds a NUL byte (a
crash can leave zeros in a log): dropping it would blame another rank.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ascendify.errors import AscendifyError
from ascendify.runfolder import RANK_FOLDER, RANK_LOG, SUMMARY_NAME, TIMES_SUFFIX
from ascendify.textfile import read_json

MAX_FILES = 20_000  # below one path: beyond this the input is not a job's logs
# Folders below one path: plogs lie 6 deep in a job's directory; a tree far deeper is not logs.
MAX_DEPTH = 64
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC  # a FIFO opened so does not wait
_PROC_RANK = re.compile(r"-proc-rank-(\d+)-device-(\d+)")
_WORKER = re.compile(r"^modelarts-job-.*-worker-(\d+)\.log$")
_PLOG = re.compile(r"^(?:plog|device)-(\d+)_\d+\.log$")
_SKIPPED_SUFFIXES = (
    TIMES_SUFFIX, ".json", ".db", ".db-wal", ".db-shm", ".tsv", ".pt", ".bin", ".npy", ".py", ".pyc",
    ".sh", ".yaml", ".toml", ".csv",
)  # fmt: skip


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


@dataclass(frozen=True)
class Skipped:
    """A file left out, or read in part, and why."""

    path: Path
    reason: str


@dataclass
class Inputs:
    sources: list[Source] = field(default_factory=list)
    summaries: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def discover(paths: list[Path]) -> Inputs:
    """The log files and run summaries below ``paths``; a missing path is an input error."""
    inputs = Inputs()
    seen: set[str] = set()
    workers: list[Source] = []
    for path in paths:
        if not path.exists():
            raise ExplainInputError(f"{path}: no such file or directory")
        files = _walk(_logs_of_job(path), inputs.skipped) if path.is_dir() else [path]
        for file in files:
            reason = not_regular(file)
            if reason is not None:
                inputs.skipped.append(Skipped(file, reason))
                continue
            real = os.path.realpath(file)
            if real in seen:
                continue
            seen.add(real)
            if file.name == SUMMARY_NAME:
                summary = _summary(file, inputs.skipped)
                if summary is not None:
                    inputs.summaries.append(summary)
                continue
            source = classify(file, inputs.skipped)
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


def classify(file: Path, skipped: list[Skipped] | None = None) -> Source | None:
    """The rank and kind of one regular file, or None for what is not a text log (a binary file
    whose rank is unknown is listed in ``skipped``)."""
    name = file.name
    if name.endswith(_SKIPPED_SUFFIXES):
        return None
    match = RANK_LOG.fullmatch(name) or _PROC_RANK.search(name)
    if match:
        return Source(file, int(match.group(1)), "rank")
    rank = next(
        (
            int(m.group(1))
            for part in reversed(file.parts[:-1])
            if (m := RANK_FOLDER.fullmatch(part))
        ),
        None,
    )
    if rank is None:
        problem = _binary(file)
        if problem is not None:
            if skipped is not None:
                skipped.append(Skipped(file, problem))
            return None
    if _WORKER.match(name):
        return Source(file, None, "worker")
    kind = "plog" if _PLOG.match(name) or "plog" in file.parts else "log"
    return Source(file, rank, kind)


def not_regular(file: Path) -> str | None:
    """Why ``file`` (its link's target, for a link) is not read, or None for a regular file."""
    try:
        mode = os.stat(file).st_mode
    except OSError as error:
        return f"cannot read: {error.strerror or error}"
    return None if stat.S_ISREG(mode) else f"not a regular file ({_kind_of(mode)})"


def open_regular(file: Path) -> BinaryIO:
    """``file`` opened for reading if it is a regular file (checked on what was opened: a FIFO put
    in its place since is refused, not waited on); else OSError."""
    descriptor = os.open(file, _OPEN_FLAGS)
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(f"not a regular file ({_kind_of(mode)})")
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def _kind_of(mode: int) -> str:
    kinds = (
        (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"),
    )  # fmt: skip
    return next((name for test, name in kinds if test(mode)), "not a file")


def _walk(root: Path, skipped: list[Skipped]) -> list[Path]:
    """The files below ``root``, in name order; links to folders are not followed, a folder
    that cannot be listed is listed in ``skipped``. Iterative: depth costs no recursion."""
    found: list[Path] = []
    pending: list[tuple[Path, int]] = [(root, 0)]
    while pending:
        folder, depth = pending.pop()
        if depth > MAX_DEPTH:
            raise ExplainInputError(f"{root}: folders nested more than {MAX_DEPTH} deep: not logs")
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError as error:
            skipped.append(Skipped(folder, f"cannot list: {error.strerror or error}"))
            continue
        folders = [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
        pending += [(sub, depth + 1) for sub in reversed(folders)]  # popped in name order
        found += [Path(e.path) for e in entries if not e.is_dir(follow_symlinks=False)]
        if len(found) > MAX_FILES:
            raise ExplainInputError(f"{root}: more than {MAX_FILES} files: not a job's logs")
    return found


def _binary(file: Path) -> str | None:
    """Why ``file`` is read as a binary file (a NUL byte in its head), or None."""
    try:
        with open_regular(file) as handle:
            head = handle.read(4096)
    except OSError as error:
        return f"cannot read: {error.strerror or error}"
    return "binary (a NUL byte in its first 4 KiB)" if b"\0" in head else None


def _summary(file: Path, skipped: list[Skipped]) -> dict[str, Any] | None:
    """A launcher's summary, read as the small regular file it is (a link to ``/dev/zero`` or a
    huge file is refused by the bounded reader and listed in ``skipped``)."""
    try:
        data = read_json(file, "run summary")
    except (OSError, ValueError, AscendifyError) as error:
        skipped.append(Skipped(file, _reason(error)))
        return None
    if not isinstance(data, dict):
        skipped.append(Skipped(file, "not a JSON object"))
        return None
    return data


def _reason(error: Exception) -> str:
    if isinstance(error, OSError):
        return f"cannot read: {error.strerror or error}"
    if isinstance(error, ValueError):
        return f"not valid JSON ({error})"
    return str(error)
