"""A GPU project whose scripts sit at the root, in a sub-folder started from the root, and in a folder they
are started from, training with Adam, fused and foreach AdamW, RMSprop, Adadelta and pinned DataLoaders
(with worker processes): through the redirect and after ``migrate --target portable``, each script gives the
losses of its hand-written CPU version. CI runs this on a CPU-only torch and on a CUDA build without a GPU.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.auto.test_scripts import ANNOUNCEMENT, _env, losses
from tests.conftest import HANG_BOUND, ascendify_env

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "project"
CPU_VERSIONS = HERE / "project_cpu"
# (script, the folder it is started from, relative to the project root; its CPU version)
STARTS = [
    ("train.py", ".", "train.py"),
    ("codes/run.py", ".", "run.py"),
    ("gan.py", "gan", "gan.py"),
]

pytestmark = [pytest.mark.slow, pytest.mark.cuda_build]


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=HANG_BOUND,
        check=False,
    )  # fmt: skip


def _cpu_losses(name: str) -> list[str]:
    done = _run([str(CPU_VERSIONS / name)], CPU_VERSIONS, _env())
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(losses(done.stdout)) >= 3, done.stdout
    return losses(done.stdout)


@pytest.mark.parametrize(("script", "start", "cpu_version"), STARTS)
def test_the_redirect_gives_the_cpu_losses(script: str, start: str, cpu_version: str) -> None:
    done = _run(["-m", "ascendify.auto", script], PROJECT / start, _env())
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stderr.count(ANNOUNCEMENT) == 1
    assert losses(done.stdout) == _cpu_losses(cpu_version)


@pytest.fixture(scope="module")
def portable(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("portable")
    done = subprocess.run(
        [sys.executable, "-m", "ascendify", "migrate", "-i", str(PROJECT), "-o", str(out),
         "--target", "portable", "-j", "1"],
        env=ascendify_env(), capture_output=True, text=True, timeout=HANG_BOUND, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out / f"{PROJECT.name}_msft"


def test_the_portable_helper_is_beside_every_script_that_imports_it(portable: Path) -> None:
    helpers = sorted(path.relative_to(portable) for path in portable.rglob("portable_device.py"))
    assert helpers == [Path("codes/portable_device.py"), Path("gan/portable_device.py"),
                       Path("portable_device.py")]  # fmt: skip
    template = (portable / "portable_device.py").read_text()
    assert all((portable / helper).read_text() == template for helper in helpers)


@pytest.mark.parametrize(("script", "start", "cpu_version"), STARTS)
def test_the_portable_result_gives_the_cpu_losses(
    portable: Path, script: str, start: str, cpu_version: str
) -> None:
    assert "import portable_device" in (portable / start / script).read_text()
    plain = {key: value for key, value in _env().items() if key != "PYTHONPATH"}
    done = _run([script], portable / start, plain)
    assert done.returncode == 0, done.stderr[-3000:]
    assert losses(done.stdout) == _cpu_losses(cpu_version)
