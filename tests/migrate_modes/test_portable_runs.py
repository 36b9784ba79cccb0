"""``--target portable`` proven by running: the migrated GPU scripts train on this CPU-only machine, alone
and under ``torch.distributed.run`` with two processes, and reach the very loss of a hand-written CPU
version of the same script.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ascendify.cli import main
from tests.conftest import HANG_BOUND, RunCli, again_after_teardown_abort

pytestmark = pytest.mark.cuda_build

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PROJECTS = HERE / "projects"
REFERENCE = HERE / "reference"
CORPUS = ("classifier", "lm", "legacy")
DISTRIBUTED = ("classifier", "lm")
IMPORTS_ASCENDIFY = re.compile(r"^\s*(?:import|from)\s+ascendify\b", re.MULTILINE)
_SINGLE: dict[str, dict[str, object]] = {}  # single-process results of the migrated scripts


def cuda_uses(text: str) -> list[str]:
    """``.cuda`` attributes and ``"cuda"`` strings left in the code (docstrings aside)."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Attribute) and node.attr in ("cuda", "is_cuda"):
            found.append(ast.unparse(node))
        elif isinstance(node, ast.Constant) and node.value in ("cuda", "cuda:0"):
            found.append(repr(node.value))
    return found


def plain_env() -> dict[str, str]:
    """A child environment that cannot import ascendify (the result must not need it)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(OMP_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    return env


def run_python(args: list[str], cwd: Path) -> dict[str, object]:
    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *args],
            cwd=cwd,
            env=plain_env(),
            capture_output=True,
            text=True,
            timeout=HANG_BOUND,
            check=False,
        )

    done = again_after_teardown_abort(run(), run)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 1, done.stdout
    result = json.loads(lines[0])
    assert isinstance(result, dict)
    return result


def torchrun(script: str) -> list[str]:
    return ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", script]


def single_process(migrated: dict[str, Path], name: str) -> dict[str, object]:
    if name not in _SINGLE:
        _SINGLE[name] = run_python(["train.py"], migrated[name])
    return _SINGLE[name]


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    # Migrated in process: the fast test below reads the results, only the slow ones run them.
    out = tmp_path_factory.mktemp("portable")
    results = {}
    for name in CORPUS:
        argv = ["migrate", "-i", str(PROJECTS / name), "-o", str(out), "--target", "portable"]
        assert main([*argv, "-j", "1"]) == 0, name
        results[name] = out / f"{name}_msft"
    return results


def test_result_is_device_agnostic_and_self_contained(migrated: dict[str, Path]) -> None:
    for name, result in migrated.items():
        text = (result / "train.py").read_text()
        assert not IMPORTS_ASCENDIFY.search(text)
        assert cuda_uses(text) == [], name
        assert '"nccl"' not in text
        helper = (result / "portable_device.py").read_text()
        assert not IMPORTS_ASCENDIFY.search(helper)
        assert re.findall(r"^import (\w+)", helper, re.MULTILINE) == [
            "contextlib",
            "sys",
            "time",
            "torch",
        ]
        assert "import portable_device" in text


def code_files(result: Path) -> dict[str, bytes]:
    """The files of a result that are the project (the reports aside)."""
    reports = {
        "change_list.csv",
        "unsupported_op.csv",
        "unsupported_op.xlsx",
        "msFmkTranspltlog.txt",
    }
    return {
        path.relative_to(result).as_posix(): path.read_bytes()
        for path in sorted(result.rglob("*"))
        if path.is_file()
        and path.name not in reports
        and "ascendify_analysis" not in path.relative_to(result).parts
    }


@pytest.mark.parametrize(
    "project",
    [*sorted((ROOT / "src" / "ascendify" / "examples").iterdir()), PROJECTS / "classifier"],
    ids=lambda path: path.name,
)
def test_migrating_a_portable_result_again_changes_nothing(tmp_path: Path, project: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    argv = ["migrate", "--target", "portable", "-j", "1"]
    assert main([*argv, "-i", str(project), "-o", str(first)]) == 0
    result = first / f"{project.name}_msft"
    assert main([*argv, "-i", str(result), "--check"]) == 0
    assert main([*argv, "-i", str(result), "-o", str(second)]) == 0
    again = code_files(second / f"{project.name}_msft_msft")
    assert "portable_device.py" in again  # every file still imports it
    assert again == code_files(result)


@pytest.mark.slow
@pytest.mark.parametrize("name", CORPUS)
def test_single_process_loss_equals_the_hand_written_cpu_script(
    migrated: dict[str, Path], name: str
) -> None:
    portable = single_process(migrated, name)
    reference = run_python([str(REFERENCE / f"{name}.py")], migrated[name])
    assert portable == reference


@pytest.mark.slow
@pytest.mark.parametrize("name", DISTRIBUTED)
def test_two_process_loss_equals_the_hand_written_cpu_script(
    migrated: dict[str, Path], name: str
) -> None:
    portable = run_python(torchrun("train.py"), migrated[name])
    reference = run_python(torchrun(str(REFERENCE / f"{name}.py")), migrated[name])
    assert portable == reference
    assert portable["loss"] != single_process(migrated, name)["loss"]  # two ranks trained together


@pytest.mark.slow
def test_npu_target_of_the_same_corpus_differs_only_where_devices_are_named(
    tmp_path: Path, run_cli: RunCli
) -> None:
    done = run_cli(["migrate", "-i", str(PROJECTS / "classifier"), "-o", str(tmp_path)])
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "classifier_msft" / "train.py").read_text()
    assert "import torch_npu" in text
    assert "portable_device" not in text
    assert not (tmp_path / "classifier_msft" / "portable_device.py").exists()
