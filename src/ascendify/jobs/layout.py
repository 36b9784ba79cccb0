"""Where a job keeps its files, below ``<store>/<job id>/``; names follow ModelArts.

``code/`` snapshot of the code dir (the user may edit theirs while the job runs), ``spec.json``
the resolved spec, ``logs/modelarts-job-<id>-worker-<n>.log`` each node's console (rank-prefixed
lines), ``logs/modelarts-job-<id>-proc-rank-<r>-device-<d>.txt`` each rank's output,
``logs/worker-<n>/`` the node launcher's own files (rank tables, ``run_summary.json``),
``work/worker-<n>/`` each node's folder (staged inputs land there), and in it ``user-job-dir/``,
ModelArts' job dir: the ranks' working dir, holding the code under its own name, ``runner.log``,
``metrics.tsv`` the series read from the ranks' output, ``resources.tsv`` CPU, memory and
accelerator samples.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ascendify import runfolder

SNAPSHOT_IGNORE = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".venv", ".mypy_cache")
# Folders nested deeper than this are no code tree (the copy recurses once per level, and Python's
# recursion ends near 1,000).
MAX_CODE_DEPTH = 100


def too_deep(code_dir: Path, store_root: Path, limit: int = MAX_CODE_DEPTH) -> Path | None:
    """A folder of ``code_dir`` nested more than ``limit`` deep (as the snapshot would copy it),
    or None; found without recursion, before anything is copied."""
    store = os.path.realpath(store_root)
    pending = [(str(code_dir), 0)]
    while pending:
        folder, depth = pending.pop()
        if depth > limit:
            return Path(folder)
        try:
            with os.scandir(folder) as entries:
                names = [e.name for e in entries if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue  # the copy names what it cannot read
        left_out = SNAPSHOT_IGNORE(folder, names)
        pending.extend(
            (path, depth + 1)
            for name in names
            if name not in left_out
            and os.path.realpath(path := os.path.join(folder, name)) != store
        )
    return None


@dataclass(frozen=True)
class JobLayout:
    root: Path
    job_id: str

    @property
    def code(self) -> Path:
        return self.root / "code"

    @property
    def spec(self) -> Path:
        return self.root / "spec.json"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def metrics(self) -> Path:
        """The series read from the ranks' output (see :mod:`ascendify.jobs.metrics`)."""
        return self.root / "metrics.tsv"

    @property
    def resources(self) -> Path:
        """CPU, memory and accelerator samples (see :mod:`ascendify.jobs.resources`)."""
        return self.root / "resources.tsv"

    @property
    def runner_log(self) -> Path:
        return self.root / "runner.log"

    @property
    def platform_job_id(self) -> str:
        """JOB_ID as the ranks see it, as ModelArts names its jobs."""
        return f"modelarts-job-{self.job_id}"

    def worker_log(self, node: int) -> Path:
        return self.logs / f"{self.platform_job_id}-worker-{node}.log"

    def rank_log(self, rank: int, device: int) -> Path:
        return self.logs / f"{self.platform_job_id}-proc-rank-{rank}-device-{device}.txt"

    def launcher_dir(self, node: int) -> Path:
        return self.logs / f"worker-{node}"

    def workdir(self, node: int) -> Path:
        return self.root / "work" / f"worker-{node}"

    def job_dir(self, node: int) -> Path:
        """Node ``node``'s ``MA_JOB_DIR``: where its ranks start, as ModelArts' ``user-job-dir``."""
        return self.workdir(node) / "user-job-dir"

    def place_code(self, node: int, name: str) -> Path:
        """The code copy as node ``node``'s job dir holds it, under the code dir's own ``name``:
        a relative link to :attr:`code` (the nodes share the one copy; the job dir may move)."""
        placed = self.job_dir(node) / name
        placed.parent.mkdir(parents=True, exist_ok=True)
        if not placed.is_symlink():
            placed.symlink_to(os.path.relpath(self.code, placed.parent), target_is_directory=True)
        return placed

    def summary(self, node: int) -> dict[str, Any] | None:
        """The node launcher's ``run_summary.json``: per-rank exit codes and the root cause."""
        from ascendify.errors import AscendifyError
        from ascendify.textfile import read_json

        try:  # bounded: a rank can replace it (a link to /dev/zero, a FIFO)
            data = read_json(self.launcher_dir(node) / runfolder.SUMMARY_NAME, "run summary")
        except (OSError, ValueError, AscendifyError):
            return None
        return data if isinstance(data, dict) else None

    def root_cause(self, nodes: int) -> dict[str, Any] | None:
        """The first failure of the job, from the summary of the node whose rank failed."""
        for node in range(nodes):
            summary = self.summary(node) or {}
            if summary.get("state") == "failed" and summary.get("root_cause"):
                root: dict[str, Any] = summary["root_cause"]
                return root
        return None

    def attempts(self, nodes: int) -> list[dict[str, Any]]:
        """The job's attempts, each merged from every node's summary: first start, last end,
        the cause the failed node gave, exit codes and stacks of every rank."""
        merged: dict[int, dict[str, Any]] = {}
        for node in range(nodes):
            for record in (self.summary(node) or {}).get("attempts", ()):
                seen = merged.setdefault(
                    record["attempt"], {**record, "exit_codes": {}, "stacks": {}}
                )
                seen["start"] = min(seen["start"], record["start"])
                seen["end"] = max(seen["end"], record["end"])
                if record["state"] == "failed" and seen["state"] != "failed":
                    seen.update(
                        state="failed",
                        cause=record["cause"],
                        reason=record["reason"],
                        rank=record.get("rank"),
                    )
                seen["exit_codes"].update(record["exit_codes"])
                seen["stacks"].update(record["stacks"])
        return [merged[attempt] for attempt in sorted(merged)]

    def link_rank_logs(self, node: int, cards: int) -> None:
        """ModelArts' per-rank names for the launcher's ``rank_<r>.log`` files.

        The launcher numbers ranks node by node, so node ``n``'s local rank ``d`` is global rank
        ``n * cards + d`` on device ``d``. Links may point at files the launcher has yet to write.
        """
        self.logs.mkdir(parents=True, exist_ok=True)
        for device in range(cards):
            rank = node * cards + device
            link = self.rank_log(rank, device)
            if not link.is_symlink():
                link.symlink_to(Path(self.launcher_dir(node).name) / runfolder.rank_log_name(rank))

    def snapshot(self, code_dir: Path, store_root: Path) -> None:
        """Copy ``code_dir`` to :attr:`code`, leaving out caches and the job store itself when it
        lies inside the code dir (it would copy itself into itself, level after level)."""
        store = os.path.realpath(store_root)
        inside = os.path.relpath(store, os.path.realpath(code_dir))
        outside = inside in (os.curdir, os.pardir) or inside.startswith(os.pardir + os.sep)
        skipped = None if outside else inside
        store_in_copy = os.path.normpath(os.path.join(code_dir, skipped)) if skipped else None

        def ignore(directory: str, names: list[str]) -> set[str]:
            left_out = set(SNAPSHOT_IGNORE(directory, names))
            if store_in_copy is not None:
                left_out.update(
                    name
                    for name in names
                    if os.path.normpath(os.path.join(directory, name)) == store_in_copy
                )
            return left_out

        shutil.copytree(code_dir, self.code, ignore=ignore, symlinks=True)
