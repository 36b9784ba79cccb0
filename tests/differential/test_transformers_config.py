"""A transformers ``Trainer`` project written for GPUs (``ddp_backend="nccl"``, ``tf32=True``,
``optim="adamw_apex_fused"`` in a script, ``--ddp_backend nccl --optim adamw_apex_fused`` in its
launch script), migrated, still trains on this CPU machine, and prints the losses of the same
training written for the CPU (gloo, torch's AdamW): the NPU migration's script under the npu
stand-in (hccl is gloo there, NpuFusedAdamW is torch's AdamW), the portable migration's launch
script as it is (accelerate picks the backend). Each runs as a one-rank distributed job, as ``torchrun`` would start it: with a
``ddp_backend`` the Trainer needs the rank variables even alone. The original itself cannot run here:
transformers refuses ``tf32=True`` without CUDA, and NCCL and apex are CUDA's."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ascendify_env, needs
from tests.npu_standin import standin_env

pytestmark = needs("transformers")

PROJECT = Path(__file__).resolve().parent / "hf_project"
SCRIPT = "hf_trainer.py"
_TIMEOUT = 900  # a tiny BERT on a shared 2-core machine: bounds a hang, measures nothing


def _one_rank(env: dict[str, str]) -> dict[str, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return {
        **env, "RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "LOCAL_WORLD_SIZE": "1",
        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "TOKENIZERS_PARALLELISM": "false",
        "HF_HUB_OFFLINE": "1",
    }  # fmt: skip


def _losses(command: list[str], env: dict[str, str], cwd: Path) -> list[float]:
    done = subprocess.run(
        command, env=_one_rank(env), capture_output=True, text=True, timeout=_TIMEOUT,
        check=False, cwd=cwd,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    losses: list[float] = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(losses) == 6
    return losses


def _migrated(tmp_path: Path, target: str, source: Path) -> Path:
    out = tmp_path / target
    done = subprocess.run(
        [sys.executable, "-m", "ascendify", "migrate", "-i", str(source), "-o", str(out),
         "-j", "1", "--no-analysis", "--target", target],
        env=ascendify_env(), capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out / f"{source.name}_msft"


@pytest.mark.slow
@pytest.mark.timeout(3 * _TIMEOUT)
def test_the_migrated_trainer_project_trains_as_the_cpu_one(tmp_path: Path) -> None:
    cpu = tmp_path / "cpu"
    shutil.copytree(PROJECT, cpu)
    (cpu / SCRIPT).write_text(
        (PROJECT / SCRIPT)
        .read_text()
        .replace('ddp_backend="nccl"', 'ddp_backend="gloo"')
        .replace("    tf32=True,\n", "")
        .replace('"adamw_apex_fused"', '"adamw_torch"')
    )
    python = [sys.executable, SCRIPT]
    reference = _losses([*python, str(tmp_path / "run-cpu")], ascendify_env(), cpu)

    npu = _migrated(tmp_path, "npu", PROJECT)
    text = (npu / SCRIPT).read_text()
    assert 'ddp_backend="hccl"' in text
    assert 'optim="adamw_torch_npu_fused"' in text
    assert "tf32" not in text
    npu_env = standin_env(ascendify_env())
    assert _losses([*python, str(tmp_path / "run-npu")], npu_env, npu) == reference

    portable = _migrated(tmp_path, "portable", PROJECT)
    launch = (portable / "run.sh").read_text()
    assert "--ddp_backend" not in launch.split("\n", 2)[2]  # its comment keeps the words
    assert "--optim adamw_torch \\\n" in launch
    run = ["bash", "run.sh", str(tmp_path / "run-portable")]
    venv_first = ascendify_env(
        {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    )
    assert _losses(run, venv_first, portable) == reference
