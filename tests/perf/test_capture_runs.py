"""--profile through the other ways a job starts: a recorded job (job submit), and a nested
launcher with the other start hooks (--nan-check, --hang-timeout) armed in the same ranks."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from ascendify.perf import analyse
from tests.conftest import again_after_teardown_abort, ascendify_env, run_bounded

pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).parent / "scripts" / "straggler.py"


def _cli(*args: str, env: dict[str, str] | None = None) -> object:
    argv = [sys.executable, "-m", "ascendify", *args]
    first = run_bounded(argv, env=ascendify_env(env))
    return again_after_teardown_abort(first, lambda: run_bounded(argv, env=ascendify_env(env)))


def test_a_submitted_job_profiles_every_rank_read_by_id_and_in_describe(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    shutil.copy(SCRIPT, code / "train.py")
    env = {"ASCENDIFY_JOBS_DIR": str(tmp_path / "jobs")}
    submitted = _cli(
        "job", "submit", "--code-dir", str(code), "--boot-file", "train.py", "--cards", "2",
        "--hyper", "steps=4", "--profile", "1-2", "--wait", env=env,
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr  # type: ignore[attr-defined]
    job_id = next(
        word
        for word in submitted.stdout.split() + submitted.stderr.split()  # type: ignore[attr-defined]
        if (tmp_path / "jobs" / word).is_dir()
    )
    read = _cli("perf", job_id[:6], "--json", env=env)
    assert read.returncode == 0, read.stderr  # type: ignore[attr-defined]
    assert '"rank": 1' in read.stdout  # type: ignore[attr-defined]
    assert '"step": 2' in read.stdout  # type: ignore[attr-defined]
    described = _cli("job", "describe", job_id, env=env)
    assert described.returncode == 0, described.stderr  # type: ignore[attr-defined]
    section = described.stdout.split("performance (ascendify perf):")[1]  # type: ignore[attr-defined]
    assert "verdict: " in section
    assert "median step per rank" in section


def test_a_nested_launcher_with_the_other_hooks_still_profiles(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    ran = _cli(
        "run", "--nproc-per-node", "2", "--log-dir", str(log_dir), "--nan-check", "--hang-timeout", "600",
        "--profile", "1-2",
        "torchrun", "--nproc-per-node", "2", str(SCRIPT), "--steps", "4",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr  # type: ignore[attr-defined]
    analysis = analyse(str(log_dir))
    assert [profile.rank for profile in analysis.profiles] == [0, 1]
    assert [step.step for step in analysis.profiles[1].steps] == [1, 2]
    assert analysis.problems == ()
