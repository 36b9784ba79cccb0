"""``migrate ... distributed``: the result trains on two ranks through its own launch script."""

from __future__ import annotations

import csv
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import HANG_BOUND, RunCli

pytestmark = pytest.mark.slow  # every test here starts processes

PROJECT = Path(__file__).resolve().parent / "projects" / "single_card"


def migrate_distributed(run_cli: RunCli, out: Path, *extra: str) -> Path:
    done = run_cli(["migrate", "-i", str(PROJECT), "-o", str(out), *extra,
                    "distributed", "-m", "train.py"])  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out / "single_card_msft_multi"


def test_portable_result_trains_on_two_ranks_through_the_fallback_loop(
    tmp_path: Path, run_cli: RunCli
) -> None:
    result = migrate_distributed(run_cli, tmp_path, "--target", "portable")
    script = result / "run_distributed_npu.sh"
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert "please input" not in script.read_text()
    # A PATH with python but without any ascendify command: the script must use its own loop.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # A wrapper, not a link: a link to a venv's python that is itself a link loses the venv.
    python3 = bin_dir / "python3"
    python3.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python3.chmod(0o755)
    path = os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"])
    assert shutil.which("ascendify", path=path) is None
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(
        PATH=path, NPUS="2", MASTER_PORT=str(29500 + os.getpid() % 1000), OMP_NUM_THREADS="1"
    )
    done = subprocess.run(
        [str(script), "--epochs", "2", "--out", "trained.pt"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=HANG_BOUND, check=False,
    )  # fmt: skip
    logs = {rank: (result / f"output_npu_{rank}.log").read_text() for rank in (0, 1)}
    assert done.returncode == 0, (done.stdout, done.stderr, logs)
    epochs = {
        rank: [json.loads(line) for line in text.splitlines() if line.startswith("{")]
        for rank, text in logs.items()
    }
    for rank in (0, 1):
        assert [entry["epoch"] for entry in epochs[rank]] == [0, 1]
        assert all(entry["samples"] == 32 for entry in epochs[rank])  # half of 64 each
    assert epochs[0][0]["loss"] != epochs[1][0]["loss"]  # different shards
    import torch

    state = torch.load(result / "trained.pt")
    assert sorted(state) == ["0.bias", "0.weight", "2.bias", "2.weight"]  # no "module." prefix


def test_a_failing_rank_fails_the_script(tmp_path: Path, run_cli: RunCli) -> None:
    result = migrate_distributed(run_cli, tmp_path, "--target", "portable")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(NPUS="2", PYTHON=sys.executable, PATH="/usr/bin:/bin")
    done = subprocess.run(
        [str(result / "run_distributed_npu.sh"), "--epochs", "not-a-number"],
        env=env, capture_output=True, text=True, timeout=HANG_BOUND, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert "a rank failed" in done.stderr
    assert "invalid int value" in (result / "output_npu_0.log").read_text()


def test_npu_result_joins_hccl_and_wraps_the_model(tmp_path: Path, run_cli: RunCli) -> None:
    result = migrate_distributed(run_cli, tmp_path)
    text = (result / "train.py").read_text()
    assert 'init_process_group("hccl", rank=RANK_ID, world_size=RANK_SIZE)' in text
    assert "torch_npu.npu.set_device(DEVICE_ID)" in text
    assert "DistributedSampler(data, shuffle=True)" in text
    assert "train_loader.sampler.set_epoch(epoch)" in text
    assert "model = torch.nn.parallel.DistributedDataParallel(model" in text
    assert 'getattr(model, "module", model).state_dict()' in text
    with (result / "change_list.csv").open() as stream:
        codes = {row["Rule"] for row in csv.DictReader(stream)}
    assert {"DST001", "DST101", "DST103", "DST201", "DST202", "DST203"} <= codes
    compile(text, "train.py", "exec")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["distributed", "-m", "missing.py"], "not a Python file"),
        (["distributed", "-m", "/etc/hostname"], "must be inside"),
        (["distributed", "-m", "train.py", "-t", "model()"], "model variable"),
    ],
)
def test_bad_distributed_options_are_usage_errors(
    tmp_path: Path, run_cli: RunCli, args: list[str], message: str
) -> None:
    done = run_cli(["migrate", "-i", str(PROJECT), "-o", str(tmp_path), *args])
    assert done.returncode == 2
    assert message in done.stderr
    assert not any(tmp_path.iterdir())


def test_one_failing_rank_stops_the_job_quickly_and_leaves_no_process(
    tmp_path: Path, run_cli: RunCli
) -> None:
    import time

    import psutil

    result = migrate_distributed(run_cli, tmp_path, "--target", "portable")
    main = result / "train.py"
    main.write_text(
        main.read_text().replace(
            "def main():\n",
            'def main():\n    if RANK_ID == 1:\n        raise RuntimeError("rank 1 breaks")\n',
        )
    )
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(NPUS="2", PYTHON=sys.executable, PATH="/usr/bin:/bin", MASTER_PORT="29977")
    started = time.monotonic()
    done = subprocess.run(
        [str(result / "run_distributed_npu.sh")],
        env=env, capture_output=True, text=True, timeout=HANG_BOUND, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    # The failed rank did not wait for the others (torch's collective timeout is 30 minutes).
    assert time.monotonic() - started < 300
    assert "rank 1 breaks" in (result / "output_npu_1.log").read_text()
    # The ranks run "python train.py" in the result directory: none may be left there.
    left = [p.pid for p in psutil.process_iter(["cwd"]) if p.info["cwd"] == str(result)]
    assert left == []
