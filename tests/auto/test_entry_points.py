"""``python -m ascendify.auto``, ``import ascendify.transfer_to_npu`` and the ASCENDIFY_AUTO start-up hook."""

from __future__ import annotations

import importlib.util
import re
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

import ascendify
from ascendify._autostart import HOOK_LINE, PTH_NAME, write_hook
from tests.auto.conftest import NO_CUDA
from tests.auto.test_scripts import TORCHRUN, _env, assert_same_losses, cpu_reference
from tests.conftest import HANG_BOUND, again_after_teardown_abort

PACKAGE_DIR = Path(ascendify.__file__).parent

PROBE = """
import sys, torch
print("argv", sys.argv[1:])
print("device", torch.zeros(1, device="cuda").device)
print("loaded", "ascendify" in sys.modules)
"""


def _python(
    args: list[str],
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    executable: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(executable or sys.executable), *args], env=_env(env), cwd=cwd, capture_output=True,
        text=True, timeout=HANG_BOUND, check=False,
    )  # fmt: skip


@pytest.fixture
def probe(tmp_path: Path) -> Path:
    path = tmp_path / "probe.py"
    path.write_text(PROBE)
    return path


@pytest.mark.slow
def test_a_script_runs_as_main_with_its_own_arguments(probe: Path) -> None:
    result = _python(["-m", "ascendify.auto", str(probe), "--epochs", "2", "cuda"])
    assert result.returncode == 0, result.stderr
    assert "argv ['--epochs', '2', 'cuda']" in result.stdout
    assert "device cpu" in result.stdout
    assert result.stderr.count("ascendify.auto: running on CPU") == 1


@pytest.mark.slow
def test_a_module_runs_with_dash_m(tmp_path: Path) -> None:
    package = tmp_path / "trainer"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "main.py").write_text(PROBE)
    result = _python(["-m", "ascendify.auto", "-m", "trainer.main", "x"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "argv ['x']" in result.stdout
    assert "device cpu" in result.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        ([], {}, "usage"),
        (["missing.py"], {}, "no such script"),
        (["-m"], {}, "usage"),
        (["-m", "missing"], {}, "no module named 'missing'"),
        (["-m", "missing.sub"], {}, "no module named 'missing.sub'"),
        (["probe.py"], {"ASCENDIFY_DEVICE": "gpu"}, "is not a device"),
    ],
)
def test_bad_input_exits_2_with_a_message(
    args: list[str], env: dict[str, str], message: str, probe: Path
) -> None:
    result = _python(["-m", "ascendify.auto", *args], env=env, cwd=probe.parent)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert "running on" not in result.stderr  # refused before anything is patched or announced


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("torch_npu") is not None, reason="torch_npu is here")
def test_npu_target_code_without_torch_npu_says_what_to_do_instead(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import torch\nimport torch_npu\nx = torch.ones(1).npu()\n")
    (tmp_path / "uses_other.py").write_text("import not_installed_anywhere\n")
    result = _python(["-m", "ascendify.auto", "train.py"], cwd=tmp_path)
    assert result.returncode == 2
    assert "train.py: imports torch_npu, which is not installed here" in result.stderr
    assert "--target portable" in result.stderr
    assert "Traceback" not in result.stderr
    other = _python(["-m", "ascendify.auto", "uses_other.py"], cwd=tmp_path)
    assert other.returncode == 1
    assert "No module named 'not_installed_anywhere'" in other.stderr  # only torch_npu is explained


@pytest.mark.slow
@pytest.mark.cuda_build
def test_importing_transfer_to_npu_enables_the_redirect(probe: Path) -> None:
    script = probe.parent / "one_line.py"
    script.write_text("import ascendify.transfer_to_npu\n" + probe.read_text())
    result = _python([str(script)], env={"RANK": "0"})
    assert result.returncode == 0, result.stderr
    assert "device cpu" in result.stdout
    assert "ascendify.auto: running on CPU" in result.stderr


def _environment(tmp_path: Path) -> tuple[Path, Path]:
    """A throwaway virtual environment (a user site is off inside virtual environments) whose
    site-packages also lists this interpreter's, so torch (and pip, setuptools) import; the
    environment the tests run in is not written to. Its python and its site-packages."""
    environment = tmp_path / "env"
    venv.create(environment, with_pip=False, symlinks=True)
    python = environment / "bin" / "python"
    site_dir = Path(
        _python(["-c", "import site; print(site.getsitepackages()[0])"], executable=python)
        .stdout.strip()
    )  # fmt: skip
    # Plain paths in a .pth are appended to sys.path; "00-" sorts before the hook.
    (site_dir / "00-host-packages.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    return python, site_dir


@pytest.fixture
def python_with_hook(tmp_path: Path) -> Path:
    """An interpreter whose site-packages holds the .pth hook, where installing the wheel puts it."""
    python, site_dir = _environment(tmp_path)
    hook = write_hook(site_dir)
    assert hook.read_text() == HOOK_LINE
    return python


@pytest.mark.slow
def test_an_editable_install_writes_the_hook_too(tmp_path: Path) -> None:
    """The README's ``pip install -e .`` must leave ASCENDIFY_AUTO=1 working (about 2 s)."""
    python, site_dir = _environment(tmp_path)
    project = PACKAGE_DIR.parents[1]
    installed = _python(
        ["-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index", "-e",
         str(project)],
        executable=python,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    assert (site_dir / PTH_NAME).read_text(encoding="utf-8") == HOOK_LINE
    started = _python(
        ["-c", "import sys; print('ascendify._autostart' in sys.modules)"],
        env={"ASCENDIFY_AUTO": "1"},
        executable=python,
    )
    assert started.stdout.strip() == "True", started.stderr


@pytest.mark.slow
def test_the_start_up_hook_enables_every_process_when_asked(
    python_with_hook: Path, probe: Path
) -> None:
    auto_on = {"ASCENDIFY_AUTO": "1"}
    enabled = _python([str(probe)], env=auto_on, executable=python_with_hook)
    assert enabled.returncode == 0, enabled.stderr
    assert "device cpu" in enabled.stdout
    assert enabled.stderr.count("ascendify.auto: running on CPU") == 1
    untouched = _python(
        ["-c", "import sys; print(sorted({'torch', 'ascendify.auto'} & set(sys.modules)))"],
        env=auto_on,
        executable=python_with_hook,
    )
    assert untouched.stdout.strip() == "[]"  # nothing heavy until the program imports torch


@pytest.mark.slow
def test_the_start_up_hook_does_nothing_otherwise(python_with_hook: Path, probe: Path) -> None:
    plain = _python([str(probe)], env={"ASCENDIFY_AUTO": "0"}, executable=python_with_hook)
    assert plain.returncode != 0
    assert re.search(NO_CUDA, plain.stderr)
    assert str(PACKAGE_DIR) not in plain.stderr  # no frame of ours in the traceback
    wrong = _python(
        ["-c", "print('ran')"], env={"ASCENDIFY_AUTO": "yes"}, executable=python_with_hook
    )
    assert wrong.stdout.strip() == "ran"
    assert "only '0' or '1'" in wrong.stderr


@pytest.mark.slow
def test_the_hook_reaches_every_torchrun_worker(python_with_hook: Path) -> None:
    script = Path(__file__).parent / "scripts" / "classifier_ddp.py"

    def run() -> subprocess.CompletedProcess[str]:
        return _python(
            [*TORCHRUN, str(script)], env={"ASCENDIFY_AUTO": "1"}, executable=python_with_hook
        )

    result = again_after_teardown_abort(run(), run)
    assert_same_losses(result, cpu_reference("classifier_ddp", torchrun=True), count=3)


DEFERRED_PROBE = """
import sys, torch
from ascendify import auto
auto.enable("cpu")
print("fsdp loaded by enable:", "torch.distributed.fsdp" in sys.modules)
from torch.distributed.fsdp import FullyShardedDataParallel
print("fsdp patched on import:", hasattr(FullyShardedDataParallel.__init__, "__wrapped__"))
auto.disable()
print("fsdp restored:", not hasattr(FullyShardedDataParallel.__init__, "__wrapped__"))
"""


@pytest.mark.slow
def test_targets_in_modules_not_yet_imported_are_patched_when_imported() -> None:
    result = _python(["-c", DEFERRED_PROBE])
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "fsdp loaded by enable: False",
        "fsdp patched on import: True",
        "fsdp restored: True",
    ]


def test_the_plan_is_printed_without_patching(capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    from ascendify.auto.__main__ import main

    before = torch.Tensor.to
    assert main(["--plan", "npu"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert any(
        line.startswith("AUTO220  torch.cuda.CUDAGraph") and "NPUGraph" in line for line in printed
    )
    assert any("torch.cuda.DoubleTensor" in line and "warning" in line for line in printed)
    assert torch.Tensor.to is before
    assert main(["--plan", "gpu"]) == 2


def test_the_shipped_hook_file_is_the_hook_line() -> None:
    shipped = Path(__file__).resolve().parents[2] / "src" / "ascendify" / "ascendify-auto.pth"
    assert shipped.read_text(encoding="utf-8") == HOOK_LINE
