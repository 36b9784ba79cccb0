"""apex ported to torch_npu's fused optimizers and torch's modules (and, for the portable target, to
torch's optimizers), proven by running: the migrated trainer (the NPU one under the npu stand-in,
whose fused optimizers are torch's) prints the losses of the same training written with torch's own
classes, apex's defaults included (FusedAdam's weight_decay 0 and AdamW update, FusedRMSNorm's
eps 1e-5)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import HANG_BOUND, ascendify_env
from tests.npu_standin import standin_env

SCRIPTS = Path(__file__).resolve().parent / "apex"


def _losses(script: Path, env: dict[str, str], *args: str) -> dict[str, list[float]]:
    done = subprocess.run(
        [sys.executable, str(script), *args], env=env, capture_output=True, text=True,
        timeout=HANG_BOUND, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    losses: dict[str, list[float]] = json.loads(done.stdout)
    assert len(losses["adam"]) == len(losses["sgd"]) == 6
    return losses


@pytest.mark.slow
@pytest.mark.parametrize("target", ["npu", "portable"])
def test_the_ported_trainer_prints_the_reference_losses(target: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ascendify", "migrate", "-i", str(SCRIPTS), "-o", str(tmp_path),
         "-j", "1", "--no-analysis", "--target", target],
        env=ascendify_env(), capture_output=True, text=True, timeout=HANG_BOUND, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    script = tmp_path / f"{SCRIPTS.name}_msft" / "apex_trainer.py"
    assert "apex" not in script.read_text(encoding="utf-8").split('"""')[-1]
    env = standin_env(ascendify_env()) if target == "npu" else ascendify_env()
    assert _losses(script, env) == _losses(script, env, "--reference")
