"""``job logs``: read a block at a time (a 980 MB log once took 981 MB of memory, 2.5 times that
with -f), from the last N lines on with --tail."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ascendify.jobs import service
from ascendify.jobs.layout import JobLayout
from ascendify.jobs.service import follow, log_blocks, tail_start
from ascendify.jobs.store import JobStore
from tests.conftest import ascendify_env

LINES = b"".join(b"[rank 0]: step %d loss 0.5\n" % n for n in range(100))


@pytest.mark.parametrize("block", [4, 7, 1 << 20])
def test_tail_start_finds_the_last_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    monkeypatch.setattr(service, "LOG_BLOCK", block)
    log = tmp_path / "log"
    log.write_bytes(b"a\nbb\nccc\n")
    assert [log.read_bytes()[tail_start(log, n) :] for n in (0, 1, 2, 3, 9)] == [
        b"", b"ccc\n", b"bb\nccc\n", b"a\nbb\nccc\n", b"a\nbb\nccc\n"
    ]  # fmt: skip
    log.write_bytes(b"a\nbb\nunfinished")
    assert log.read_bytes()[tail_start(log, 2) :] == b"bb\nunfinished"
    assert tail_start(tmp_path / "none", 5) == 0


def test_blocks_are_bounded_and_whole_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service, "LOG_BLOCK", 64)
    log = tmp_path / "log"
    log.write_bytes(LINES + b"x" * 200 + b"\n" + b"being written")
    blocks = list(log_blocks(log, 0, whole=False))
    assert max(map(len, blocks)) <= 64
    assert b"".join(blocks) == LINES + b"x" * 200 + b"\n"  # the long line in pieces
    assert b"".join(log_blocks(log, 0, whole=True)) == log.read_bytes()
    assert list(log_blocks(tmp_path / "none", 0, whole=True)) == []


def _ended_job(store: JobStore, log: bytes) -> tuple[str, Path]:
    spec = {"name": "big", "engine": "local", "nodes": 1, "cards": 1, "env": {}, "hyper": {}}
    job = store.create(spec)
    store.transition(job.id, "running")
    store.transition(job.id, "succeeded", exit_code=0)
    path = JobLayout(store.job_dir(job.id), job.id).worker_log(0)
    path.parent.mkdir(parents=True)
    path.write_bytes(log)
    return job.id, path


def test_follow_an_ended_job_gives_all_from_the_start_given(tmp_path: Path) -> None:
    store = JobStore(tmp_path / "store")
    job_id, path = _ended_job(store, LINES + b"last, unfinished")
    assert b"".join(follow(store, job_id, [path])) == path.read_bytes()
    start = tail_start(path, 2)
    assert b"".join(follow(store, job_id, [path], [start])) == (
        b"[rank 0]: step 99 loss 0.5\nlast, unfinished"
    )


# Peak memory of `ascendify job logs ARGS` run as a child of a small Python (its own children
# alone are counted), in MiB; its output goes to /dev/null.
_PEAK = (
    "import resource, subprocess, sys; "
    "subprocess.run([sys.executable, '-m', 'ascendify', 'job', 'logs', *sys.argv[1:]], "
    "stdout=subprocess.DEVNULL, check=True); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)"
)


@pytest.mark.slow
def test_logs_of_a_1_gb_log_take_little_memory(tmp_path: Path) -> None:
    store = JobStore(tmp_path / "store")
    job_id, path = _ended_job(store, b"")
    with path.open("wb") as handle:  # 1 GB, sparse: a giant line of zero bytes, then lines
        handle.truncate(1 << 30)
        handle.seek(1 << 30)
        handle.write(LINES)
    env = ascendify_env({"ASCENDIFY_JOBS_DIR": str(store.root)})
    for args in ([job_id], [job_id, "-f"]):
        peak = subprocess.run(
            [sys.executable, "-c", _PEAK, *args],
            env=env, capture_output=True, text=True, timeout=600, check=True,
        )  # fmt: skip
        assert int(peak.stdout) < 64, (args, peak.stdout)
    tail = subprocess.run(
        [sys.executable, "-m", "ascendify", "job", "logs", job_id, "--tail", "2"],
        env=env, capture_output=True, timeout=120, check=True,
    )  # fmt: skip
    assert tail.stdout == b"[rank 0]: step 98 loss 0.5\n[rank 0]: step 99 loss 0.5\n"
