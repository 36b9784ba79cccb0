"""End to end on real processes: a two-rank CPU job where rank 1 raises and rank 0 then fails in
a gloo collective: ``job describe`` names rank 1 and its exception as the root cause and rank 0 as
a consequence, ``job list`` shows the cause, and a failed ``ascendify run`` ends with it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import RunCli, ascendify_env

FIXTURE = Path(__file__).parent / "fixtures" / "gloo_fail.py"


def _job(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ascendify", "job", *args],
        env=ascendify_env({"ASCENDIFY_JOBS_DIR": str(store)}),
        capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip


@pytest.mark.slow
def test_describe_names_the_rank_that_raised_and_the_one_that_failed_in_gloo(
    tmp_path: Path,
) -> None:
    code = tmp_path / "code"
    code.mkdir()
    shutil.copy(FIXTURE, code / "gloo_fail.py")
    store = tmp_path / "store"
    submitted = _job(store, "submit", "--code-dir", str(code), "--boot-file", "gloo_fail.py",
                     "--cards", "2", "--wait")  # fmt: skip
    job_id = submitted.stdout.splitlines()[0]
    assert submitted.returncode == 1, submitted.stderr
    described = _job(store, "describe", job_id).stdout
    why = described.split("why (from every rank's logs):\n", 1)[1]
    assert why.startswith("  root cause: rank 1, first went wrong at "), why
    assert "ValueError: bad batch at step 3" in why.splitlines()[1]
    consequences = why.split("consequences (later, or waiting for it):\n", 1)[1]
    rank_0 = consequences.splitlines()[0]
    assert rank_0.startswith("    rank 0 at "), consequences
    assert "(echo)" in rank_0
    assert "GLOO-CLOSED" in rank_0 or "GLOO-RESET" in rank_0
    assert "order of failure: rank 1, rank 0" in why
    row = next(line for line in _job(store, "list").stdout.splitlines() if line.startswith(job_id))
    assert "rank 1: ValueError: bad batch at step 3" in row
    assert (store / job_id / "cause.json").is_file()  # list reads it from now on


@pytest.mark.slow
def test_a_failed_run_ends_with_the_cause(tmp_path: Path, run_cli: RunCli) -> None:
    boot = tmp_path / "oom.py"
    boot.write_text(
        "import os, sys\n"
        "if os.environ['RANK'] == '1':\n"
        "    sys.exit('RuntimeError: NPU out of memory. Tried to allocate 5.03 GiB (NPU 3; 60.96 GiB "
        "total capacity; 49.47 GiB already allocated; 49.47 GiB current active; 1.32 GiB free; "
        "57.55 GiB reserved in total by PyTorch)')\n"
    )
    logs = tmp_path / "logs"
    result = run_cli(["run", "--nproc-per-node", "2", "--log-dir", str(logs), sys.executable,
                      str(boot)])  # fmt: skip
    assert result.returncode == 1, result.stderr
    cause = next(line for line in result.stderr.splitlines() if "cause: " in line)
    assert "cause: rank 1: NPU-OOM (torch_npu) - fragmentation" in cause
    assert "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True" in cause
    assert f"ascendify explain {logs}" in cause
    assert (logs / "rank_1.log.times").read_text().split()[0] == "0"
