"""Migration proven by running: GPU training scripts in the shapes of popular public trainers, each run
four ways on this CPU-only machine, must print identical losses and weights.

1. the original, on its own CPU path;
2. the ``--target portable`` migration, on its GPU path (the host has no accelerator: the CPU);
3. the NPU migration, on its GPU path, with the test-only torch_npu stand-in first on ``PYTHONPATH``
   (npu devices run on the CPU; names and signatures the real wheel lacks fail);
4. the portable migration again, on an NPU host: the stand-in, loaded by ``import torch`` as
   torch_npu 2.6+ registers itself, so its GPU path runs on the npu.

Each script prints one JSON line: the device its GPU path chose, the losses and a hash of the trained
weights. The NPU run must report the ``npu`` device, so the GPU path really ran.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import HANG_BOUND, again_after_teardown_abort, ascendify_env
from tests.npu_standin import standin_env

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE / "scripts"
TORCHRUN = ("-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2")


@dataclass(frozen=True)
class Script:
    name: str
    cpu_args: tuple[str, ...]  # the original's CPU path
    gpu_args: tuple[str, ...]  # the GPU path, run by both migrations
    distributed: bool = False  # started by torchrun, two processes
    # The portable run's arguments where the GPU path refuses a host without an accelerator (as
    # the original does): there the script's own choice of the best device is run.
    portable_args: tuple[str, ...] | None = None
    # What code left on CUDA computes: the NPU migration runs it on the npu, where a CPU host and
    # the portable result (which keeps it behind CUDA's own checks) skip it.
    cuda_only: tuple[str, ...] = ()
    # The NPU run's arguments where its command line differs (a device option: ``npu`` there, where
    # the portable result takes the original's ``cuda`` and maps it, saying so on stderr).
    npu_args: tuple[str, ...] | None = None
    announced: str = ""  # what each portable run says on stderr

    @property
    def file(self) -> str:
        return f"{self.name}.py"


CORPUS = (
    Script("gpt_trainer", ("--device", "cpu"), ()),
    Script("imagenet_style", (), ("--gpu", "0")),
    Script("lm_trainer", (), ("--cuda",)),
    Script("dlrm_style", (), ("--use-gpu",)),
    Script("ddp_torchrun", ("--cpu",), (), distributed=True),
    Script("yolo_select_device", ("--device", "cpu"), ("--device", "0"), portable_args=()),
    Script("prefetcher", ("--device", "cpu"), ()),
    Script("gan_style", (), ()),
    Script("capability_checks", ("--cpu",), ()),
    Script("star_imports", ("--cpu",), ()),
    Script("nanogpt_ddp", ("--cpu",), (), distributed=True),
    Script("device_inventory", ("--cpu",), (), cuda_only=("inventory",)),
    Script("flag_trainer", (), ()),
    Script(
        "device_option",
        ("--device", "cpu"),
        ("--device", "cuda"),
        npu_args=("--device", "npu"),
        announced="portable_device: --device 'cuda' is run on",
    ),
)


def test_the_corpus_lists_every_script() -> None:
    assert sorted(path.stem for path in SCRIPTS.glob("*.py")) == sorted(s.name for s in CORPUS)


def _migrate(out: Path, *options: str) -> Path:
    done = subprocess.run(
        [sys.executable, "-m", "ascendify", "migrate", "-i", str(SCRIPTS), "-o", str(out),
         "-j", "1", *options],
        env=ascendify_env(), capture_output=True, text=True, timeout=HANG_BOUND, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out / f"{SCRIPTS.name}_msft"


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {
        "portable": _migrate(tmp_path_factory.mktemp("portable"), "--target", "portable"),
        "npu": _migrate(tmp_path_factory.mktemp("npu")),
    }


def _run(
    script: Script,
    path: Path,
    args: tuple[str, ...],
    cwd: Path,
    standin: bool,
    *,
    autoload: bool,
    announced: str = "",
) -> object:
    """Run a script (alone or under torchrun) and return its JSON line; ``standin``: on an NPU
    host (the stand-in), ``autoload``: where ``import torch`` loads torch_npu (2.6+),
    ``announced``: what it must say once on stderr."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    if standin:
        env = standin_env(env, autoload=autoload)
    command = [sys.executable, *(TORCHRUN if script.distributed else ()), str(path), *args]

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            command,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=HANG_BOUND,
            check=False,
        )

    done = again_after_teardown_abort(run(), run)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 1, done.stdout
    if announced:
        assert done.stderr.count(announced) == 1, done.stderr  # once, however often it is read
    return json.loads(lines[0])


@pytest.mark.slow
@pytest.mark.parametrize("script", CORPUS, ids=lambda script: script.name)
def test_cpu_original_portable_gpu_path_and_npu_gpu_path_train_identically(
    script: Script, migrated: dict[str, Path], tmp_path: Path
) -> None:
    runs = {}
    portable_args = script.gpu_args if script.portable_args is None else script.portable_args
    for leg, path, args, standin in (
        ("original", SCRIPTS / script.file, script.cpu_args, False),
        ("portable", migrated["portable"] / script.file, portable_args, False),
        ("npu", migrated["npu"] / script.file, script.npu_args or script.gpu_args, True),
        # The portable result on an NPU host: its GPU path on the (stand-in) NPU.
        ("portable-npu", migrated["portable"] / script.file, script.gpu_args, True),
    ):
        cwd = tmp_path / leg  # checkpoints are written to the working directory
        cwd.mkdir()
        announced = script.announced if leg.startswith("portable") else ""
        result = _run(
            script, path, args, cwd, standin, autoload=leg == "portable-npu", announced=announced
        )
        assert isinstance(result, dict)
        runs[leg] = result
    assert runs["original"]["device"] == runs["portable"]["device"] == "cpu"
    # the GPU path ran, on the (stand-in) NPU
    assert {runs[leg]["device"] for leg in runs if leg.endswith("npu")} == {"npu"}
    assert runs["original"]["losses"]
    trained = {
        leg: {key: value for key, value in run.items() if key != "device"}
        for leg, run in runs.items()
    }
    for key in script.cuda_only:
        assert trained["npu"].pop(key)  # the NPU migration computed it on the npu
    assert all(run == trained["original"] for leg, run in trained.items() if leg != "npu")
    npu = {key: value for key, value in trained["original"].items() if key not in script.cuda_only}
    assert trained["npu"] == npu
