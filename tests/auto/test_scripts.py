"""Real GPU-style training scripts, run unmodified through the redirect, against hand-written CPU versions."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.auto.conftest import NO_CUDA
from tests.conftest import HANG_BOUND, again_after_teardown_abort, ascendify_env

pytestmark = [pytest.mark.slow, pytest.mark.cuda_build]  # every test here starts processes

SCRIPTS = Path(__file__).parent / "scripts"
ANNOUNCEMENT = "ascendify.auto: running on CPU"
TORCHRUN = ["-m", "torch.distributed.run", "--standalone", "--monitor-interval", "0.1",
            "--nproc-per-node", "2"]  # fmt: skip


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = ascendify_env(extra)
    for name in ("ASCENDIFY_DEVICE", "ASCENDIFY_AUTO", "ASCENDIFY_AUTO_ANNOUNCED"):
        env.pop(name, None)
    env["OMP_NUM_THREADS"] = "1"  # two runs side by side on two cores: no thread oversubscription
    env.update(extra or {})
    return env


def run_side_by_side(
    first: list[str], second: list[str], env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    """Run two Python command lines at once (two cores) and wait for both, bounded."""
    processes = [
        subprocess.Popen([sys.executable, *args], env=_env(env), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for args in (first, second)
    ]  # fmt: skip
    results = []
    for args, process in zip((first, second), processes, strict=True):
        try:
            stdout, stderr = process.communicate(timeout=HANG_BOUND)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
        done = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
        results.append(again_after_teardown_abort(done, lambda args=args: _run_alone(args, env)))
    return results[0], results[1]


def _run_alone(args: list[str], env: dict[str, str] | None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], env=_env(env), capture_output=True, text=True, timeout=HANG_BOUND,
        check=False,
    )  # fmt: skip


def losses(output: str) -> list[str]:
    return [line for line in output.splitlines() if " loss " in line]


def assert_same_losses(
    auto: subprocess.CompletedProcess[str], cpu: subprocess.CompletedProcess[str], count: int
) -> None:
    assert auto.returncode == 0, auto.stderr[-3000:]
    assert cpu.returncode == 0, cpu.stderr[-3000:]
    assert len(losses(auto.stdout)) == count, auto.stdout
    assert losses(auto.stdout) == losses(cpu.stdout)
    assert auto.stderr.count(ANNOUNCEMENT) == 1, auto.stderr


# Hand-written CPU runs, kept for the other tests that compare against them (they are deterministic).
_CPU_RUNS: dict[tuple[str, bool], subprocess.CompletedProcess[str]] = {}


def _command(name: str, torchrun: bool, redirected: bool) -> list[str]:
    script = str(SCRIPTS / f"{name}.py" if redirected else SCRIPTS / f"{name}_cpu.py")
    launcher = TORCHRUN if torchrun else []
    return [*launcher, *(["-m", "ascendify.auto"] if redirected else []), script]


def compare_with_cpu(
    name: str, torchrun: bool
) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    """The redirected GPU script and its hand-written CPU version, run side by side."""
    auto, cpu = run_side_by_side(_command(name, torchrun, True), _command(name, torchrun, False))
    _CPU_RUNS[(name, torchrun)] = cpu
    return auto, cpu


def cpu_reference(name: str, torchrun: bool) -> subprocess.CompletedProcess[str]:
    if (name, torchrun) not in _CPU_RUNS:
        command = _command(name, torchrun, False)
        _CPU_RUNS[(name, torchrun)] = again_after_teardown_abort(
            _run_alone(command, None), lambda: _run_alone(command, None)
        )
    return _CPU_RUNS[(name, torchrun)]


@pytest.mark.parametrize(
    ("name", "count"), [("classifier_ddp", 3), ("lm_autocast", 4), ("legacy_typed", 3)]
)
def test_single_process_matches_the_hand_written_cpu_version(name: str, count: int) -> None:
    assert_same_losses(*compare_with_cpu(name, torchrun=False), count)


@pytest.mark.parametrize(("name", "count"), [("classifier_ddp", 3), ("lm_autocast", 4)])
def test_torchrun_two_processes_match_the_hand_written_cpu_version(name: str, count: int) -> None:
    assert_same_losses(*compare_with_cpu(name, torchrun=True), count)


def test_the_scripts_fail_without_the_redirect() -> None:
    """The GPU scripts really are CUDA code: on this machine they cannot run as written."""
    plain = subprocess.run(
        [sys.executable, str(SCRIPTS / "legacy_typed.py")],
        env=_env(), capture_output=True, text=True, timeout=HANG_BOUND, check=False,
    )  # fmt: skip
    assert plain.returncode != 0
    assert re.search(NO_CUDA, plain.stderr)
