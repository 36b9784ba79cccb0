"""``ascendify demo``: the README's main job, run for real, and its choice of what to run."""

from __future__ import annotations

import csv
import hashlib
import os
from importlib import resources
from pathlib import Path

import pytest

from ascendify.demo import CPU_RANKS, plan_demo, step_titles
from ascendify.migrate import Target
from tests.conftest import HANG_BOUND, RunCli


def _example_digest() -> str:
    digest = hashlib.sha256()
    root = resources.files("ascendify") / "examples" / "gpu_classifier"
    for entry in sorted(root.iterdir(), key=lambda item: item.name):
        if entry.is_file():
            digest.update(entry.name.encode() + entry.read_bytes())
    return digest.hexdigest()


@pytest.mark.slow
def test_demo_migrates_and_trains_with_two_cpu_ranks(run_cli: RunCli, tmp_path: Path) -> None:
    before = _example_digest()
    clone = tmp_path / "clone"  # where a user runs the README's command
    clone.mkdir()
    # The `python` on PATH is not the one ascendify runs in (a venv's script run without activating
    # the venv): the ranks must still start in ascendify's own interpreter.
    elsewhere = tmp_path / "other-python"
    elsewhere.mkdir()
    (elsewhere / "python").write_text(
        "#!/bin/sh\necho 'not the interpreter of ascendify' >&2\nexit 3\n"
    )
    (elsewhere / "python").chmod(0o755)
    env = {
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "PATH": f"{elsewhere}{os.pathsep}{os.environ['PATH']}",
    }
    result = run_cli(["demo"], cwd=clone, env=env, timeout=HANG_BOUND)
    assert result.returncode == 0, result.stderr[-3000:]
    assert list(clone.iterdir()) == []  # nothing left behind in the folder it ran from
    workdir = tmp_path / "cache" / "ascendify" / "demo"
    assert f"working in {workdir} (--workdir" in result.stderr
    with (workdir / "npu" / "gpu_classifier_msft" / "change_list.csv").open(newline="") as handle:
        rules = {row["Rule"] for row in csv.DictReader(handle)}
    assert {"NPU001", "NPU101", "NPU201", "NPU401"} <= rules
    npu_code = (workdir / "npu" / "gpu_classifier_msft" / "train.py").read_text()
    assert "import torch_npu" in npu_code
    assert 'backend="hccl"' in npu_code
    assert "no Ascend NPU or NVIDIA GPU here" in result.stderr
    assert "3. migrate --target portable" in result.stderr
    assert "[rank 0]: epoch 1 loss" in result.stderr + result.stdout
    assert f"all {CPU_RANKS} ranks finished" in result.stderr
    assert (workdir / "output" / "model.pt").stat().st_size > 0
    assert _example_digest() == before  # the bundled project is only read


def test_an_ascend_host_runs_the_npu_migration_on_every_card(tmp_path: Path) -> None:
    (tmp_path / "dev").mkdir()
    for index in range(4):
        (tmp_path / "dev" / f"davinci{index}").touch()
    plan = plan_demo(tmp_path / "work", env={}, root=tmp_path)
    assert (plan.target, plan.nproc_per_node) == (Target.NPU, "auto")


def test_a_host_without_accelerators_runs_the_portable_migration_on_the_cpu(tmp_path: Path) -> None:
    plan = plan_demo(tmp_path / "work", env={"PATH": ""}, root=tmp_path)
    assert (plan.target, plan.nproc_per_node) == (Target.PORTABLE, str(CPU_RANKS))
    assert plan.result(Target.PORTABLE) == tmp_path / "work" / "portable" / "gpu_classifier_msft"


def test_the_steps_are_numbered_one_after_another(tmp_path: Path) -> None:
    plan = plan_demo(tmp_path / "work", env={"PATH": ""}, root=tmp_path)  # two migrations here
    titles = step_titles(plan)
    assert [title.removeprefix("[bold]").split(".")[0] for title in titles] == ["1", "2", "3", "4"]
    assert "2. migrate --target npu" in titles[1]
    assert "3. migrate --target portable" in titles[2]
    assert "4. run" in titles[3]
