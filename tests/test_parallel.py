"""The map shared by ``migrate`` and ``analyze``: in-process for small work, worker processes above."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ascendify._parallel import PARALLEL_FROM, parallel_map
from tests.conftest import HANG_BOUND, ascendify_env


def _process_of(offset: int, item: int) -> tuple[int, int]:
    return os.getpid(), offset + item


def test_small_work_stays_in_this_process_whatever_the_workers() -> None:
    done = list(parallel_map(_process_of, 100, range(PARALLEL_FROM - 1), 2))
    assert done == [(os.getpid(), 100 + item) for item in range(PARALLEL_FROM - 1)]


@pytest.mark.slow
def test_work_from_the_threshold_on_goes_to_worker_processes() -> None:
    done = list(parallel_map(_process_of, 100, range(PARALLEL_FROM), 2))
    assert [value for _, value in done] == [100 + item for item in range(PARALLEL_FROM)]
    assert os.getpid() not in {process for process, _ in done}


class _CountsPickles:
    """A shared value that notes each time it is pickled (to cross to a process) in a file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[type[_CountsPickles], tuple[Path]]:
        with self.path.open("a") as notes:
            notes.write("pickled\n")
        return (_CountsPickles, (self.path,))


def _path_of(shared: _CountsPickles, item: int) -> tuple[str, int]:
    return str(shared.path), item


@pytest.mark.slow
def test_the_shared_value_goes_to_each_worker_at_most_once(tmp_path: Path) -> None:
    notes = tmp_path / "pickles.txt"
    items = range(PARALLEL_FROM * 4)  # many chunks per worker
    done = list(parallel_map(_path_of, _CountsPickles(notes), items, 2))
    assert done == [(str(notes), item) for item in items]
    pickles = notes.read_text().splitlines() if notes.exists() else []
    assert len(pickles) <= 2  # none where workers are forked, one per worker where spawned


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="no CPU affinity on this system")
@pytest.mark.parametrize("command", ["migrate", "analyze"])
def test_default_jobs_are_the_cores_the_process_may_use(command: str) -> None:
    one_core = min(os.sched_getaffinity(0))
    done = subprocess.run(
        [sys.executable, "-m", "ascendify", command, "--help"],
        env={**ascendify_env(), "COLUMNS": "1000"},
        preexec_fn=lambda: os.sched_setaffinity(0, {one_core}),
        capture_output=True,
        text=True,
        timeout=HANG_BOUND,
        check=True,
    )
    assert "the cores this process may use, 1 here" in done.stdout
