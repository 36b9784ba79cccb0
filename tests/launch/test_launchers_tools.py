"""The launcher's tools work for the ranks of a nested launcher as for a plain script: the
--hang-timeout stacks of every rank, and `compare dump` recording each rank.

Both start accelerate in several processes on CPU ranks (gloo): slow, bounded by HANG_BOUND.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import ascendify_env, needs, run_bounded
from tests.jobs.conftest import pids, running

pytestmark = [pytest.mark.slow, needs("accelerate")]

FRAMEWORKS = Path(__file__).parent / "fixtures" / "frameworks"


def ascendify(*argv: str, cwd: Path) -> tuple[int, str]:
    done = run_bounded([sys.executable, "-m", "ascendify", *argv], cwd=cwd, env=ascendify_env())
    return done.returncode, done.stdout + done.stderr


def test_a_hung_accelerate_job_is_stopped_with_every_ranks_stack(tmp_path: Path) -> None:
    code, said = ascendify(
        "run", "--nproc-per-node", "2", "--log-dir", "logs", "--hang-timeout", "8",
        "accelerate", "launch", str(FRAMEWORKS / "accelerate_hang.py"),
        cwd=tmp_path,
    )  # fmt: skip
    assert code == 124, said[-3000:]
    summary = json.loads((tmp_path / "logs" / "run_summary.json").read_text())
    assert summary["root_cause"]["cause"] == "hang"
    stacks = summary["stacks"]
    # rank 1 is where it blocked, rank 0 waits for it in accelerate's barrier
    assert 'accelerate_hang.py", line 14' in stacks["1"]
    assert "wait_for_everyone" in stacks["0"]
    assert "barrier" in stacks["0"]
    started = pids(tmp_path)
    assert sorted(started) == [0, 1]
    assert running(list(started.values())) == [], "a rank outlived the job"


def test_compare_dump_records_each_rank_of_an_accelerate_job(tmp_path: Path) -> None:
    code, said = ascendify(
        "compare", "dump", "-o", "dump", "--steps", "2", "--",
        "ascendify", "run", "--nproc-per-node", "2", "--log-dir", "logs",
        "accelerate", "launch", str(FRAMEWORKS / "accelerate_train.py"),
        cwd=tmp_path,
    )  # fmt: skip
    assert code == 0, said[-3000:]
    manifest = json.loads((tmp_path / "dump" / "manifest.json").read_text())
    assert {rank["world_size"] for rank in manifest["ranks"].values()} == {2}
    assert sorted(manifest["ranks"]) == ["0", "1"]
    # Each rank's file is its own (its header), and both ranks recorded the same steps of the same
    # modules: one program, two data shards.
    shapes = []
    for rank in ("0", "1"):
        header, *records = (tmp_path / "dump" / f"rank{rank}.jsonl").read_text().splitlines()
        assert json.loads(header)["header"]["rank"] == int(rank)
        assert records, f"rank {rank} recorded nothing"
        shapes.append([(r["s"], r["k"], r["p"]) for r in map(json.loads, records)])
    assert shapes[0] == shapes[1]
    assert {step for step, _, _ in shapes[0]} == {0, 1}
