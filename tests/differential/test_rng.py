"""RNG state and generator code migrated to torch_npu, proven by running: a model-parallel RNG
tracker (``rng/rng_tracker.py``, the shape Megatron-LM, DeepSpeed, fairscale, nanotron and apex
carry: a setter queued through ``_lazy_call`` that indexes ``default_generators``, fork, an activation
checkpoint that replays its forward's states) prints the same random numbers, dropout masks and
gradients as the original.

The original runs unchanged on the CPU under the runtime redirect (``python -m ascendify.auto``,
where torch.cuda's generator is the CPU's); the NPU migration runs under the torch_npu stand-in,
whose npu generators are the generator npu tensors draw from.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ascendify_env
from tests.differential import migrate_folder
from tests.npu_standin import standin_env

SCRIPTS = Path(__file__).resolve().parent / "rng"
TRACKER = "rng_tracker.py"


def _run(command: list[str], env: dict[str, str], cwd: Path) -> dict[str, object]:
    done = subprocess.run(
        command, env=env, cwd=cwd, capture_output=True, text=True, timeout=240, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 1, done.stdout
    result: dict[str, object] = json.loads(lines[0])
    return result


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("npu")
    return migrate_folder(SCRIPTS, out)


def _original(tmp_path: Path) -> dict[str, object]:
    command = [sys.executable, "-m", "ascendify.auto", str(SCRIPTS / TRACKER)]
    return _run(command, ascendify_env({"ASCENDIFY_DEVICE": "cpu"}), tmp_path)


def _on_npu(script: Path, tmp_path: Path) -> dict[str, object]:
    return _run([sys.executable, str(script)], standin_env(), tmp_path)


@pytest.mark.slow
def test_the_tracker_forks_restores_and_replays_as_the_original(
    migrated: Path, tmp_path: Path
) -> None:
    original = _original(tmp_path)
    npu = _on_npu(migrated / TRACKER, tmp_path)
    assert (original.pop("device"), npu.pop("device")) == ("cuda", "npu")
    assert npu == original
    drawn = original["drawn"]
    assert isinstance(drawn, dict)
    # the fork draws from its own state and gives the default one back
    assert len({str(drawn[key]) for key in ("fork_1", "default", "fork_2")}) == 3
    # set_rng_state(state, "cuda") and its keyword form replay the saved state
    assert drawn["again_1"] == drawn["again_2"] == drawn["again_3"]
    # the checkpoint's recompute drew the forward's dropout mask again
    masks = original["masks"]
    assert isinstance(masks, list)
    assert len(masks) == 2
    assert masks[0] == masks[1]
    assert {0.0, 2.0} <= set(masks[0])


@pytest.mark.slow
def test_a_setter_left_on_cuda_is_caught(migrated: Path, tmp_path: Path) -> None:
    """The half-migration the tracker suffered before: its callers on the NPU, its setter queued on
    torch.cuda, which never initialises there. The comparison above must see the difference."""
    text = (migrated / TRACKER).read_text(encoding="utf-8")
    half = text.replace("from torch_npu.npu import _lazy_call", "from torch.cuda import _lazy_call")
    assert half != text
    (tmp_path / TRACKER).write_text(half, encoding="utf-8")
    npu = _on_npu(tmp_path / TRACKER, tmp_path)
    original = _original(tmp_path)
    assert npu["masks"] != original["masks"] or npu["drawn"] != original["drawn"]
