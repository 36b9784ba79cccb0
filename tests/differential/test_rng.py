"""RNG state and generator code migrated to torch_npu, proven by running: a model-parallel RNG
tracker (``rng/rng_tracker.py``, the shape Megatron-LM, DeepSpeed, fairscale, nanotron and apex
carry: a setter queued through ``_lazy_call`` that indexes ``default_generators``, fork, an activation
checkpoint that replays its forward's states) prints the same random numbers, dropout masks and
gradients as the original.

The original runs unchanged on the CPU under the runtime redirect (``python -m ascendify.auto``,
where torch.cuda's generator is the CPU's); the NPU migration runs under the torch_npu stand-in,
whose npu generators are the generator npu tensors draw from; the ``--target portable`` migration
runs on this host's CPU, where its RNG helpers fork the CPU's generator. Megatron-LM's seeding of
the tracker (``rng/tracker_ranks.py``) runs on two gloo ranks: different masks per
tensor-parallel rank, the same per data-parallel rank, as the original's logic on the CPU.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import HANG_BOUND, again_after_teardown_abort, ascendify_env
from tests.differential import migrate_folder
from tests.npu_standin import standin_env

SCRIPTS = Path(__file__).resolve().parent / "rng"
TRACKER = "rng_tracker.py"
RANKS = "tracker_ranks.py"
TORCHRUN = ("-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2")


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


@pytest.fixture(scope="module")
def portable(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return migrate_folder(SCRIPTS, tmp_path_factory.mktemp("portable"), "--target", "portable")


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


@pytest.mark.slow
@pytest.mark.cuda_build
def test_the_portable_tracker_forks_the_cpu_generator_as_the_original(
    portable: Path, tmp_path: Path
) -> None:
    text = (portable / TRACKER).read_text(encoding="utf-8")
    assert "torch.cuda.get_rng_state" not in text
    assert "from torch.cuda import" not in text  # the setter is queued through the host's device
    assert "from portable_device import lazy_call as _lazy_call" in text
    found = _run([sys.executable, str(portable / TRACKER)], ascendify_env(), tmp_path)
    original = _original(tmp_path)
    assert (original.pop("device"), found.pop("device")) == ("cuda", "cpu")
    assert found == original


def _on_two_ranks(command: list[str], env: dict[str, str], cwd: Path) -> dict[str, object]:
    env = {**env, "OMP_NUM_THREADS": "1"}

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *TORCHRUN, *command], env=env, cwd=cwd, capture_output=True,
            text=True, timeout=HANG_BOUND, check=False,
        )  # fmt: skip

    done = again_after_teardown_abort(run(), run)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 1, done.stdout
    result: dict[str, object] = json.loads(lines[0])
    return result


@pytest.mark.slow
@pytest.mark.cuda_build
def test_the_portable_tracker_draws_per_parallel_rank_as_the_original(
    portable: Path, tmp_path: Path
) -> None:
    original = _on_two_ranks(
        ["-m", "ascendify.auto", str(SCRIPTS / RANKS)],
        ascendify_env({"ASCENDIFY_DEVICE": "cpu"}),
        tmp_path,
    )
    found = _on_two_ranks([str(portable / RANKS)], ascendify_env(), tmp_path)
    assert found == original
    tensor_parallel, data_parallel = found["tensor_parallel"], found["data_parallel"]
    assert isinstance(tensor_parallel, list)
    assert isinstance(data_parallel, list)
    # tensor-parallel ranks fork states of their own; data-parallel ranks the same one
    assert tensor_parallel[0]["fork"] != tensor_parallel[1]["fork"]
    assert data_parallel[0]["fork"] == data_parallel[1]["fork"]
    # outside the fork every rank draws from the data-parallel seed
    assert len({str(drawn["default"]) for drawn in [*tensor_parallel, *data_parallel]}) == 1
