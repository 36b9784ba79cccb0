"""A file with NPU code of its own keeps its CUDA logic as written (NPU305), proven by running: the
migrated trainer, under the torch_npu stand-in, takes its own NPU path and trains as the original
does on the CPU (the CUDA branch's half precision, flipped to "npu", would change the losses)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ascendify_env
from tests.differential import migrate_folder
from tests.npu_standin import standin_env

SCRIPTS = Path(__file__).resolve().parent / "own_npu"
SCRIPT = "own_npu_branch.py"


def _losses(script: Path, env: dict[str, str]) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=240,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.slow
def test_the_npu_path_of_the_file_trains_as_the_original_on_the_cpu(tmp_path: Path) -> None:
    migrated = migrate_folder(SCRIPTS, tmp_path) / SCRIPT
    text = migrated.read_text(encoding="utf-8")
    assert 'if device == "cuda":' in text
    assert 'if device != "cuda":' in text
    original = _losses(SCRIPTS / SCRIPT, ascendify_env())
    npu = _losses(migrated, standin_env(ascendify_env()))
    assert (original.pop("device"), npu.pop("device")) == ("cpu", "npu")
    assert npu == original
