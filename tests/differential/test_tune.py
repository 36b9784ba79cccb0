"""``migrate --tune`` proven by running: a two-rank DDP trainer migrated without tuning, with the
safe set and with every tuning rule, run under the npu stand-in. The safe set changes nothing that
is computed (the same losses, bit for bit); every rule stays within 1e-4 of the untuned losses (the
fused optimizers round differently on an NPU; the stand-in runs torch's own). Tuning twice changes
nothing."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import HANG_BOUND, again_after_teardown_abort, ascendify_env
from tests.npu_standin import standin_env

SCRIPTS = Path(__file__).resolve().parent / "tune"
TRAINER = "ddp_adamw.py"
TORCHRUN = ("-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2")
UNSAFE_TOLERANCE = 1e-4
TUNINGS = {"untuned": (), "safe": ("--tune",), "all": ("--tune", "all")}


def _migrate(source: Path, out: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ascendify", "migrate", "-i", str(source), "-o", str(out),
         "-j", "1", "--no-analysis", *options],
        env=ascendify_env(), capture_output=True, text=True, timeout=HANG_BOUND, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    results = {}
    for name, options in TUNINGS.items():
        out = tmp_path_factory.mktemp(name)
        done = _migrate(SCRIPTS, out, *options)
        assert done.returncode == 0, done.stderr
        results[name] = out / f"{SCRIPTS.name}_msft"
    return results


def _losses(script: Path, cwd: Path) -> list[float]:
    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *TORCHRUN, str(script)], cwd=cwd,
            env=standin_env(ascendify_env({"OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"})),
            capture_output=True, text=True, timeout=HANG_BOUND, check=False,
        )  # fmt: skip

    done = again_after_teardown_abort(run(), run)
    assert done.returncode == 0, done.stderr[-3000:]
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("{")]
    result = json.loads(line)
    assert result["device"] == "npu"
    losses: list[float] = result["losses"]
    assert len(losses) == 8
    return losses


@pytest.mark.slow
def test_the_report_names_each_tuning_with_its_safety(migrated: dict[str, Path]) -> None:
    def rows(name: str) -> set[tuple[str, str]]:
        with (migrated[name] / "change_list.csv").open(encoding="utf-8") as table:
            return {(row["Rule"], row["Safety"]) for row in csv.DictReader(table)}

    tuned = {row for row in rows("all") if row[0].startswith("TUN")}
    assert {("TUN001", "safe"), ("TUN101", "unsafe")} <= tuned
    assert {"TUN002", "TUN003", "TUN102", "TUN104"} <= {code for code, _ in tuned}
    assert {code for code, _ in rows("safe") if code.startswith("TUN")} == {
        "TUN001", "TUN002", "TUN003"
    }  # fmt: skip
    assert not any(code.startswith("TUN") for code, _ in rows("untuned"))
    text = (migrated["all"] / TRAINER).read_text(encoding="utf-8")
    assert "torch_npu.optim.NpuFusedAdamW(" in text
    assert "torch_npu.npu.set_compile_mode(jit_compile=False)" in text


@pytest.mark.slow
def test_tuned_trainers_print_the_untuned_losses(migrated: dict[str, Path], tmp_path: Path) -> None:
    losses = {name: _losses(path / TRAINER, tmp_path) for name, path in migrated.items()}
    assert losses["safe"] == losses["untuned"]
    worst = max(abs(a - b) for a, b in zip(losses["all"], losses["untuned"], strict=True))
    assert worst <= UNSAFE_TOLERANCE


@pytest.mark.slow
def test_tuning_twice_changes_nothing(migrated: dict[str, Path], tmp_path: Path) -> None:
    done = _migrate(migrated["all"], tmp_path, "--tune", "all", "--check")
    assert done.returncode == 0, done.stdout + done.stderr
