"""An NPU result started where torch_npu is missing fails at its import, and says what to do."""

from __future__ import annotations

import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from ascendify.migrate._imports import IMPORT_TORCH_NPU
from tests.conftest import HANG_BOUND, RunCli
from tests.migrate_modes.test_portable_runs import plain_env


@pytest.mark.slow
def test_the_npu_result_run_without_torch_npu_shows_the_hint(
    tmp_path: Path, run_cli: RunCli
) -> None:
    example = Path(str(resources.files("ascendify") / "examples" / "gpu_classifier"))
    out = tmp_path / "out"
    done = run_cli(["migrate", "-i", str(example), "-o", str(out), "--no-analysis"])
    assert done.returncode == 0, done.stderr
    result = out / "gpu_classifier_msft"
    started = subprocess.run(
        [sys.executable, "train.py"],
        cwd=result,
        env=plain_env(),
        capture_output=True,
        text=True,
        timeout=HANG_BOUND,
        check=False,
    )
    assert started.returncode != 0
    assert "No module named 'torch_npu'" in started.stderr
    assert IMPORT_TORCH_NPU in started.stderr  # the traceback prints the line, comment and all
    assert len(IMPORT_TORCH_NPU) < 100
