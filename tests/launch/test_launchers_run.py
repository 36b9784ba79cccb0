"""Nested launchers run for real on CPU ranks (gloo): each rank sees what the framework's own
launcher gives it, and trains to the same loss.

Each test starts a framework (accelerate, DeepSpeed) in several processes on a small machine: they
take minutes, and are bounded by a generous timeout rather than timed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ascendify.launch.ports import free_port
from tests.conftest import ascendify_env, needs

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200), needs("accelerate", "deepspeed")]

FRAMEWORKS = Path(__file__).parent / "fixtures" / "frameworks"
ACCELERATE_TRAIN = FRAMEWORKS / "accelerate_train.py"
DEEPSPEED_TRAIN = FRAMEWORKS / "deepspeed_train.py"
TRAINER_TRAIN = FRAMEWORKS / "trainer_train.py"
RANK_LINE = re.compile(r"^(?:\[rank \d+\]: )?(RANK=\d+ .*)$", re.MULTILINE)
TIMEOUT = 900


def run(
    argv: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *argv],
        cwd=cwd,
        env=ascendify_env(env),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def ranks(output: str) -> dict[str, dict[str, str]]:
    """``{RANK: {NAME: VALUE}}`` from the ``RANK=.. WORLD_SIZE=.. ...`` line each rank prints."""
    found = {}
    for line in RANK_LINE.findall(output):
        fields = dict(item.split("=", 1) for item in line.split())
        found[fields["RANK"]] = fields
    return found


def ascendify_run(tmp_path: Path, *command: str, flags: tuple[str, ...] = ()) -> list[str]:
    return ["ascendify", "run", "--nproc-per-node", "2", "--log-dir", str(tmp_path / "logs"),
            *flags, *command]  # fmt: skip


def test_accelerate_launch_gives_each_rank_what_accelerate_gives_it(tmp_path: Path) -> None:
    own = run(
        ["accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
         "--main_process_port", "0", str(ACCELERATE_TRAIN)],
        tmp_path,
    )  # fmt: skip
    assert own.returncode == 0, own.stderr[-3000:]
    ours = run(ascendify_run(tmp_path, "accelerate", "launch", str(ACCELERATE_TRAIN)), tmp_path)
    assert ours.returncode == 0, ours.stderr[-3000:]
    expected = ranks(own.stdout)
    assert set(expected) == {"0", "1"}
    assert ranks(ours.stdout) == expected  # RANK, WORLD_SIZE, LOCAL_RANK, PROCESSES, FINAL_LOSS
    assert "started as accelerate would" in ours.stderr
    # accelerate is told the job's count: its warning of defaults names no count of 1 for 2 ranks.
    assert "`--num_processes` was set" not in ours.stderr

    # --max-restarts 1: rank 1 crashes once after the first epoch's checkpoint; the restart
    # resumes from it and ends where the uninterrupted run did.
    resumed_dir = tmp_path / "resumed"
    resumed_dir.mkdir()
    env = {"CHECKPOINT": str(resumed_dir / "ckpt.pt"), "CRASH_RANK_ONCE": "1"}
    command = ascendify_run(
        resumed_dir, "accelerate", "launch", str(ACCELERATE_TRAIN), flags=("--max-restarts", "1")
    )
    resumed = run(command, resumed_dir, env)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    attempts = json.loads((resumed_dir / "logs" / "run_summary.json").read_text())["attempts"]
    assert [(a["state"], a["cause"]) for a in attempts] == [("failed", "exit"), ("succeeded", None)]
    assert attempts[0]["exit_codes"]["1"] == 3
    after = ranks(resumed.stdout)
    assert {rank["FIRST_EPOCH"] for rank in after.values()} == {"1"}  # from the checkpoint
    assert {r["FINAL_LOSS"] for r in after.values()} == {r["FINAL_LOSS"] for r in expected.values()}


@needs("transformers")
def test_a_trainer_script_trains_the_same_under_accelerate_ascendify_run_and_a_job(
    tmp_path: Path,
) -> None:
    """A tiny BERT (built in the script, no download) trained by transformers' Trainer: accelerate's
    own launcher, ``ascendify run ... accelerate launch`` and a job whose boot command is
    ``accelerate launch`` give each rank the same place and the same final loss; the job's loss is
    in ``job metrics``."""
    own = run(
        ["accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
         "--main_process_port", "0", str(TRAINER_TRAIN)],
        tmp_path,
    )  # fmt: skip
    assert own.returncode == 0, own.stderr[-3000:]
    expected = ranks(own.stdout)
    assert set(expected) == {"0", "1"}
    assert {rank["STEPS"] for rank in expected.values()} == {"4"}
    ours = run(ascendify_run(tmp_path, "accelerate", "launch", str(TRAINER_TRAIN)), tmp_path)
    assert ours.returncode == 0, ours.stderr[-3000:]
    assert ranks(ours.stdout) == expected  # RANK, WORLD_SIZE, LOCAL_RANK, PROCESSES, FINAL_LOSS

    code = tmp_path / "project"
    code.mkdir()
    shutil.copy(TRAINER_TRAIN, code / "train.py")  # named under the code folder, as on ModelArts
    jobs = {"ASCENDIFY_JOBS_DIR": str(tmp_path / "jobs")}
    submitted = run(
        ["ascendify", "job", "submit", "--code-dir", str(code), "--cards", "2",
         "--hang-timeout", "0", "--wait", "--boot-command", "accelerate launch project/train.py"],
        tmp_path,
        jobs,
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr[-3000:]
    job_id = submitted.stdout.splitlines()[0]
    logs = run(["ascendify", "job", "logs", job_id], tmp_path, jobs).stdout
    assert ranks(logs) == expected
    metrics = run(["ascendify", "job", "metrics", job_id, "--json"], tmp_path, jobs)
    assert metrics.returncode == 0, metrics.stderr
    [loss] = [s for s in json.loads(metrics.stdout)["series"] if s["name"] == "loss"]
    # Rank 0 printed the loss of each of the 4 steps ({'loss': '1.385', ...}, 4 digits), then
    # the run's mean as train_loss; the last step's is the final loss every rank printed.
    printed = [float(v) for v in re.findall(r"\{'loss': '([0-9.]+)'", logs)]
    assert len(printed) == 4
    assert loss["values"][:4] == printed
    assert printed[-1] == pytest.approx(float(expected["0"]["FINAL_LOSS"]), abs=1e-3)


def test_deepspeed_gives_each_rank_what_deepspeed_gives_it(tmp_path: Path) -> None:
    shutil.copy(FRAMEWORKS / "ds.json", tmp_path / "ds.json")
    script = str(DEEPSPEED_TRAIN)
    own = run(
        ["deepspeed.launcher.runner", "--num_gpus", "2", "--master_port", str(free_port()),
         script, "--deepspeed_config", "ds.json"],
        tmp_path,
    )  # fmt: skip
    assert own.returncode == 0, own.stderr[-3000:]
    # --num_gpus 4 disagrees with the topology: said in one line, and the topology wins.
    ours = run(
        ascendify_run(tmp_path, "deepspeed", "--num_gpus", "4", script,
                      "--deepspeed_config", "ds.json"),
        tmp_path,
    )  # fmt: skip
    assert ours.returncode == 0, ours.stderr[-3000:]
    expected = ranks(own.stdout)
    assert set(expected) == {"0", "1"}
    # RANK, WORLD_SIZE, LOCAL_RANK, the --local_rank argument, CROSS_SIZE, LOCAL_SIZE,
    # OMP_NUM_THREADS (DeepSpeed's launcher sets none), the loss
    assert ranks(ours.stdout) == expected
    notes = [line for line in ours.stderr.splitlines() if "--num_gpus 4" in line]
    assert notes == ["ascendify run: deepspeed asks for --num_gpus 4 (the job: 2); ascendify's "
                     "topology wins: 1 node(s) x 2 rank(s)"]  # fmt: skip
    # The plan alone: standard output is the JSON and nothing else (DeepSpeed prints as it loads).
    planned = run(
        ascendify_run(tmp_path, "deepspeed", "--bind_cores_to_rank", script, flags=("--dry-run",)),
        tmp_path,
    )
    assert planned.returncode == 0, planned.stderr[-3000:]
    plan = json.loads(planned.stdout)
    assert [worker["argv"][-1] for worker in plan["workers"]] == [
        "--local_rank=0",
        "--local_rank=1",
    ]
    assert "--bind_cores_to_rank (the ranks are not pinned to cores)" in planned.stderr


def test_two_nodes_on_loopback_make_one_accelerate_job_of_four_ranks(tmp_path: Path) -> None:
    port = str(free_port())
    nodes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ascendify",
                "run",
                "--nproc-per-node",
                "2",
                "--nnodes",
                "2",
                "--node-rank",
                str(node),
                "--master-addr",
                "127.0.0.1",
                "--master-port",
                port,
                "--local-addr",
                f"127.0.0.{node + 1}",
                "--log-dir",
                str(tmp_path / f"logs{node}"),
                "accelerate",
                "launch",
                "--num_machines",
                "1",
                str(ACCELERATE_TRAIN),
            ],
            cwd=tmp_path,
            env=ascendify_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for node in (0, 1)
    ]
    try:
        outputs = [node.communicate(timeout=TIMEOUT) for node in nodes]
    finally:
        for node in nodes:
            if node.poll() is None:
                node.kill()
                node.communicate()
    for node, (_out, err) in zip(nodes, outputs, strict=True):
        assert node.returncode == 0, err[-3000:]
        assert "accelerate launch asks for --num_machines 1 (the job: 2)" in err
    seen = {**ranks(outputs[0][0]), **ranks(outputs[1][0])}
    assert sorted(seen) == ["0", "1", "2", "3"]
    assert {rank["WORLD_SIZE"] for rank in seen.values()} == {"4"}
    assert {rank["PROCESSES"] for rank in seen.values()} == {"4"}
    assert sorted(rank["LOCAL_RANK"] for rank in seen.values()) == ["0", "0", "1", "1"]
    assert len({rank["FINAL_LOSS"] for rank in seen.values()}) == 1
