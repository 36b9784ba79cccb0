"""A job whose boot command is a framework launcher: ``job submit --boot-command "accelerate
launch ..."`` runs in the job dir (which holds the code copy under its own name), its ranks are ascendify's, and its loss is in ``job metrics``.
Real processes."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import needs
from tests.jobs.conftest import JobCli

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900), needs("accelerate")]

TRAIN = Path(__file__).parents[1] / "launch" / "fixtures" / "frameworks" / "accelerate_train.py"


def test_an_accelerate_boot_command_trains_and_its_loss_is_in_metrics(
    job: JobCli, tmp_path: Path
) -> None:
    code = tmp_path / "project"
    code.mkdir()
    shutil.copy(TRAIN, code / "train.py")  # found in the job dir as project/train.py
    submitted = job(
        "submit", "--code-dir", str(code), "--cards", "2", "--hang-timeout", "0", "--wait",
        "--boot-command", "accelerate launch --num_processes 2 project/train.py",
        timeout=800,
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    job_id = submitted.stdout.splitlines()[0]
    logs = job("logs", job_id).stdout
    finals = re.findall(
        r"RANK=(\d) WORLD_SIZE=2 LOCAL_RANK=\d PROCESSES=2 .*FINAL_LOSS=(\S+)", logs
    )
    assert sorted(rank for rank, _ in finals) == ["0", "1"]
    metrics = job("metrics", job_id, "--json")
    assert metrics.returncode == 0, metrics.stderr
    loss = next(s for s in json.loads(metrics.stdout)["series"] if s["name"] == "loss")
    # 3 epochs x 4 batches per rank, as each rank printed them
    printed = [float(v) for v in re.findall(r"\{'loss': ([0-9.]+)\}", logs)]
    assert len(printed) >= 12  # 3 epochs x 4 batches of each rank shown
    assert loss["values"]
    assert set(loss["values"]) <= set(printed)
    assert loss["values"][-1] < loss["values"][0]
    described = job("describe", job_id).stdout
    assert "accelerate launch --num_processes 2 project/train.py" in described
