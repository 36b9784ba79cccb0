"""The names of the files in a run's log folder, spelled in this one place.

``ascendify run --log-dir`` (a job: each node's ``logs/worker-<n>/``) holds, for rank ``r``:
``rank_<r>.log`` its output, ``rank_<r>.log.times`` wall-clock marks beside it (lines
``<byte offset> <epoch>``), ``rank_<r>.error.json`` torch elastic's error file,
``ascend/rank_<r>/`` CANN's plogs and ``profile/rank_<r>/`` the traces of ``--profile``; and once
``run_summary.json``, the exit codes, the root cause and the attempts. The launcher writes them;
jobs, explain, perf and the job page read them. It imports nothing of ascendify, so every layer
can import it (a rank's start hook too).
"""

from __future__ import annotations

import re
from pathlib import Path

SUMMARY_NAME = "run_summary.json"
TIMES_SUFFIX = ".times"
PROFILE_FOLDER = "profile"
ASCEND_LOG_FOLDER = "ascend"
RANK_LOG_GLOB = "rank_*.log"
RANK_LOG = re.compile(r"rank_(\d+)\.log")  # fullmatch: the group is the rank
RANK_FOLDER = re.compile(r"rank_(\d+)")  # fullmatch: ascend/rank_<r>/, profile/rank_<r>/


def rank_name(rank: int) -> str:
    """``rank_<r>``: a rank's folder under ``ascend/`` and ``profile/``."""
    return f"rank_{rank}"


def rank_log_name(rank: int) -> str:
    return f"{rank_name(rank)}.log"


def rank_log(log_dir: Path, rank: int) -> Path:
    return log_dir / rank_log_name(rank)


def error_file(log_dir: Path, rank: int) -> Path:
    """Where a rank's ``TORCHELASTIC_ERROR_FILE`` points."""
    return log_dir / f"{rank_name(rank)}.error.json"


def times_path(log: Path) -> Path:
    """The wall-clock marks beside a rank log."""
    return log.with_name(log.name + TIMES_SUFFIX)


def ascend_log_dir(log_dir: Path, rank: int) -> Path:
    """A rank's ``ASCEND_PROCESS_LOG_PATH``: where CANN writes its plogs."""
    return log_dir / ASCEND_LOG_FOLDER / rank_name(rank)


def profile_dir(log_dir: Path) -> Path:
    """The folder ``--profile`` fills, a ``rank_<r>/`` per rank."""
    return log_dir / PROFILE_FOLDER
