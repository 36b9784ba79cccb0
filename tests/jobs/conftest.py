"""Job tests: a private job store per test, the real CLI in subprocesses, real ranks."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import psutil
import pytest

from tests.conftest import HANG_BOUND, ascendify_env, run_bounded
from tests.jobs.ray_cluster import ray_cluster

# The S3 test server (moto on 127.0.0.1) and its helpers, shared with the storage tests.
from tests.storage.conftest import bucket, s3, s3_endpoint, s3_env  # noqa: F401

FIXTURES = Path(__file__).parent / "fixtures"

JobCli = Callable[..., subprocess.CompletedProcess[str]]


# One Ray cluster for the whole run (it costs about 20 s of a 2-core machine to start and 8 s to
# stop): every test that takes it is in the xdist_group "ray", so one worker holds it. Its NPU
# resources are in name only; jobs without an Ascend flavor ignore them.
RAY = pytest.mark.xdist_group("ray")


@pytest.fixture(scope="session")
def cluster() -> Iterator[str]:
    """The address of a real two-node Ray cluster; its teardown checks no Ray process outlives it."""
    with ray_cluster(npus_per_node=2) as address:
        yield address


@pytest.fixture
def jobs_dir(tmp_path: Path) -> Path:
    return tmp_path / "store"


def code_with(folder: Path, script: str) -> Path:
    """``folder``, made, holding a copy of the test script ``script`` from the fixtures."""
    folder.mkdir()
    shutil.copy(FIXTURES / script, folder / script)
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A code dir with the test rank script."""
    return code_with(tmp_path / "code", "rank.py")


@pytest.fixture
def job(jobs_dir: Path) -> JobCli:
    """Run ``python -m ascendify job ARGS`` against the test's store."""

    def run(
        *args: str, env: dict[str, str] | None = None, timeout: float = HANG_BOUND
    ) -> subprocess.CompletedProcess[str]:
        return run_bounded(
            [sys.executable, "-m", "ascendify", "job", *args],
            timeout,
            env=ascendify_env({"ASCENDIFY_JOBS_DIR": str(jobs_dir), **(env or {})}),
        )

    return run


def wait_for(
    condition: Callable[[], bool],
    timeout: float,
    what: str,
    explain: Callable[[], str] = lambda: "",
) -> None:
    """Poll ``condition``; past ``timeout`` fail, with what ``explain`` says (e.g. the job's logs)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}\n{explain()}")
        time.sleep(0.1)


def job_logs(store: Path, job_id: str) -> str:
    """Every log the job left in ``store`` (the runner's and each node's), for a failure message."""
    logs = sorted(path for path in (store / job_id).rglob("*.log") if path.is_file())
    return "\n".join(f"--- {path.name}\n{path.read_text(errors='replace')}" for path in logs)


def probe_ranks(out: Path, logs: str) -> dict[int, dict[str, str]]:
    """Check what the 4 ranks of a 2 x 2 probe job left in ``out`` and its logs; rank -> its env."""
    records = {int(p.stem.split("_")[1]): json.loads(p.read_text()) for p in out.glob("*.json")}
    assert sorted(records) == [0, 1, 2, 3]
    for rank, record in records.items():
        env = record["env"]
        assert env["RANK"] == env["RANK_ID"] == str(rank)
        assert env["RANK_SIZE"] == "4"
        assert env["DEVICE_ID"] == env["ASCEND_DEVICE_ID"] == str(rank % 2)
        assert record["sum"] == 1 + 2 + 3 + 4
        assert f"[rank {rank}]: rank {rank} of 4 starts" in logs
    return {rank: record["env"] for rank, record in records.items()}


def pids(directory: Path) -> dict[int, int]:
    """Rank -> pid, as the test ranks leave them."""
    return {
        int(path.stem.split("_")[1]): int(path.read_text())
        for path in directory.glob("rank_*.pid")
        if path.read_text()
    }


def running(pid_list: Sequence[int]) -> list[int]:
    alive = []
    for pid in pid_list:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
        except psutil.Error:
            pass
    return alive


class S3Channel(NamedTuple):
    client: Any  # boto3: the independent view of the bucket
    bucket: str
    env: dict[str, str]  # endpoint and credentials, as a user's environment has them


@pytest.fixture
def s3_channel(s3: Any, bucket: str, s3_env: dict[str, str]) -> S3Channel:  # noqa: F811
    return S3Channel(s3, bucket, s3_env)
