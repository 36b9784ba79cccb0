"""Devices handed to and from a project's own helpers in another module, proven by running: a
helper that answers a CUDA index (an int, guarded by NPU306 where it is used), a device string
passed to a helper named for devices (NPU307) and one passed to a helper whose parameter reaches
``.to()`` (by position and by keyword: NPU301), migrated and run under the torch_npu stand-in, and
migrated with ``--target portable`` and run on this host's CPU, train as the original on the CPU.
Left as they were, the index and "cuda" fail on an NPU host and on a host without CUDA."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ascendify_env
from tests.differential import migrate_folder
from tests.npu_standin import standin_env

SCRIPTS = Path(__file__).resolve().parent / "helpers"


def _losses(script: Path, env: dict[str, str], *args: str) -> object:
    done = subprocess.run(
        [sys.executable, str(script), *args], env=env, cwd=script.parent, capture_output=True,
        text=True, timeout=240, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])["losses"]


@pytest.mark.slow
@pytest.mark.cuda_build
def test_helpers_taking_and_giving_devices_train_as_the_original(tmp_path: Path) -> None:
    migrated = migrate_folder(SCRIPTS, tmp_path / "npu") / "train.py"
    text = migrated.read_text(encoding="utf-8")
    assert 'state_dict_to_device(model.state_dict(), "npu"' in text
    assert 'move(torch.rand(5, 4, generator=generator), "npu" if' in text
    portable = migrate_folder(SCRIPTS, tmp_path / "portable", "--target", "portable") / "train.py"
    original = _losses(SCRIPTS / "train.py", ascendify_env())
    assert _losses(migrated, standin_env(ascendify_env()), "--gpu", "0") == original
    assert _losses(portable, ascendify_env(), "--gpu", "0") == original
