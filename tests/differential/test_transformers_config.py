"""A transformers ``Trainer`` script written for GPUs (``ddp_backend="nccl"``, ``tf32=True``,
``optim="adamw_apex_fused"``), migrated, still trains on this CPU machine, and prints the losses of the
same training written for the CPU (gloo, torch's AdamW): the NPU migration under the npu stand-in
(hccl is gloo there, NpuFusedAdamW is torch's AdamW), the portable migration as it is (accelerate
picks the backend). Each runs as a one-rank distributed job, as ``torchrun`` would start it: with a
``ddp_backend`` the Trainer needs the rank variables even alone. The original itself cannot run here:
transformers refuses ``tf32=True`` without CUDA, and NCCL and apex are CUDA's."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ascendify_env
from tests.npu_standin import standin_env

pytest.importorskip("transformers")

SCRIPT = Path(__file__).resolve().parent / "transformers" / "hf_trainer.py"
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


def _losses(script: Path, env: dict[str, str], output: Path) -> list[float]:
    done = subprocess.run(
        [sys.executable, str(script), str(output)], env=_one_rank(env), capture_output=True,
        text=True, timeout=_TIMEOUT, check=False, cwd=script.parent,
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
    return out / f"{source.name}_msft" / SCRIPT.name


@pytest.mark.slow
@pytest.mark.timeout(3 * _TIMEOUT)
def test_the_migrated_trainer_script_trains_as_the_cpu_one(tmp_path: Path) -> None:
    original = SCRIPT.read_text()
    cpu = tmp_path / "cpu"
    cpu.mkdir()
    (cpu / SCRIPT.name).write_text(
        original.replace('ddp_backend="nccl"', 'ddp_backend="gloo"')
        .replace("    tf32=True,\n", "")
        .replace('"adamw_apex_fused"', '"adamw_torch"')
    )
    reference = _losses(cpu / SCRIPT.name, ascendify_env(), tmp_path / "run-cpu")

    npu = _migrated(tmp_path, "npu", SCRIPT.parent)
    text = npu.read_text()
    assert 'ddp_backend="hccl"' in text
    assert 'optim="adamw_torch_npu_fused"' in text
    assert "tf32" not in text
    assert _losses(npu, standin_env(ascendify_env()), tmp_path / "run-npu") == reference

    # The portable target keeps tf32=True (it would change CUDA hosts), so its source leaves it out.
    gpu_no_tf32 = tmp_path / "gpu"
    gpu_no_tf32.mkdir()
    (gpu_no_tf32 / SCRIPT.name).write_text(original.replace("    tf32=True,\n", ""))
    portable = _migrated(tmp_path, "portable", gpu_no_tf32)
    text = portable.read_text()
    assert "ddp_backend" not in text.split("TrainingArguments(", 1)[1]
    assert 'optim="adamw_torch"' in text
    assert _losses(portable, ascendify_env(), tmp_path / "run-portable") == reference
