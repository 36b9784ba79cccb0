"""Job page tests: a job store with recorded jobs, and the pages served on a real socket."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ascendify.jobs.layout import JobLayout
from ascendify.jobs.metrics import Point, append_points
from ascendify.jobs.store import JobRecord, JobStore
from ascendify.web import Pages, bind

pytest.importorskip("flask", reason="the job pages need the ui extra (flask)")

SECRET = "s3cr3t-value-of-the-page-tests"


def recorded_job(
    store: JobStore,
    name: str,
    losses: list[float],
    log: str = "",
    state: str = "succeeded",
    *,
    flavor: str | None = None,
    hyper: dict[str, str] | None = None,
    cards: int = 1,
) -> JobRecord:
    """A job in ``store`` as a finished run leaves it: record, rank 0's log, metrics file."""
    spec = {
        "name": name, "engine": "local", "nodes": 1, "cards": cards, "code_dir": "/code",
        "boot_file": "train.py", "hyper": {"lr": "0.1", "hf_token": SECRET, **(hyper or {})},
        "env": {"GITHUB_PAT": SECRET, "HCCL_CONNECT_TIMEOUT": "1800"}, "flavor": flavor,
    }  # fmt: skip
    job = store.create(spec)
    store.transition(job.id, "running", "engine local")
    if state != "running":
        store.transition(job.id, state, exit_code=0 if state == "succeeded" else 1)
    layout = JobLayout(store.job_dir(job.id), job.id)
    layout.logs.mkdir(parents=True)
    layout.rank_log(0, 0).write_text(log)
    append_points(layout.metrics, [Point(0, "loss", n, v, 1.0) for n, v in enumerate(losses)])
    return store.get(job.id)


# Rank 1 runs out of NPU memory (xingchensong/TouchNet#100); rank 0 then times out waiting for
# it in a collective (the EI0002 of vllm-project/vllm-ascend#3413), with this test's times.
OOM_LINE = (
    "[2025-10-11 15:09:02] RuntimeError: NPU out of memory. Tried to allocate 5.03 GiB (NPU 3; "
    "60.96 GiB total capacity; 49.47 GiB already allocated; 49.47 GiB current active; 1.32 GiB "
    "free; 57.55 GiB reserved in total by PyTorch)\n"
)
EI0002_LINE = (
    "EI0002: [PID: 2969] 2025-10-11-15:39:34.713.335 The wait execution of the Notify register "
    "times out. Reason: The Notify register has not received the Notify record from remote rank: "
    "[1].\n"
)


def failed_job(store: JobStore, name: str) -> JobRecord:
    """A two-rank job that failed: rank 1 out of memory, rank 0 timed out waiting for it."""
    job = recorded_job(
        store, name, [2.0, 1.6, 1.3], "2025-10-11 15:00:00 step 2 loss 1.3\n" + EI0002_LINE,
        state="failed", cards=2,
    )  # fmt: skip
    layout = JobLayout(store.job_dir(job.id), job.id)
    layout.rank_log(1, 1).write_text("2025-10-11 15:00:00 step 2 loss 1.3\n" + OOM_LINE)
    return job


@pytest.fixture
def store(tmp_path: Path) -> JobStore:
    return JobStore(tmp_path / "store")


class Serve:
    """Serves the pages of a store on 127.0.0.1 (a free port) in threads: ``serve()`` gives the
    base URL, ``serve.token(base)`` the token of that server (actions allowed)."""

    def __init__(self, store: JobStore) -> None:
        self._store = store
        self._served: dict[str, Pages] = {}

    def __call__(self, allow_actions: bool = False) -> str:
        pages = bind(self._store, host="127.0.0.1", port=0, allow_actions=allow_actions)
        threading.Thread(target=pages.server.serve_forever, args=(0.02,), daemon=True).start()
        self._served[pages.base] = pages
        return pages.base

    def token(self, base: str) -> str:
        token = self._served[base].token
        assert token is not None, "served without actions"
        return token

    def close(self) -> None:
        for pages in self._served.values():
            pages.server.shutdown()
            pages.server.server_close()


@pytest.fixture
def serve(store: JobStore) -> Iterator[Serve]:
    served = Serve(store)
    yield served
    served.close()


HANG_STACK = 'Thread 0x7f (most recent call first):\n  File "train.py", line 9 in wait_forever\n'


def hang_attempts(store: JobStore, job_id: str, restart_at: float = 2.0) -> None:
    """Two attempts of node 0, as its launcher's run summary records them: the first hung (its
    rank's stack dumped) and ended at ``restart_at``, the second began then and succeeded."""
    layout = JobLayout(store.job_dir(job_id), job_id)
    first = {
        "attempt": 0,
        "start": 0.5,
        "end": restart_at,
        "state": "failed",
        "cause": "hang",
        "reason": "no output for 60 s",
        "exit_codes": {"0": -9},
        "stacks": {"0": HANG_STACK},
    }
    second = {"attempt": 1, "start": restart_at, "end": restart_at + 5, "state": "succeeded",
              "cause": None, "reason": None, "exit_codes": {"0": 0}, "stacks": {}}  # fmt: skip
    layout.launcher_dir(0).mkdir(parents=True, exist_ok=True)
    (layout.launcher_dir(0) / "run_summary.json").write_text(
        json.dumps({"state": "succeeded", "attempts": [first, second]})
    )
