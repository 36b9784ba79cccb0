"""Jobs that recover, through ``ascendify job``: restarts, hang stacks in describe, a lost node."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
from pathlib import Path

import psutil
import pytest

from ascendify import runfolder
from ascendify.jobs.layout import JobLayout
from ascendify.jobs.store import JobStore
from tests.jobs.conftest import RAY, JobCli, job_logs, wait_for
from tests.launch.test_recover import (
    HANG_TIMEOUT,
    RESUMABLE,
    assert_nothing_left,
    line_of,
    uninterrupted,
    waits_in_all_reduce,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def code(tmp_path: Path) -> Path:
    folder = tmp_path / "code"
    folder.mkdir()
    shutil.copy(RESUMABLE, folder / "resumable.py")
    return folder


def submit(job: JobCli, code: Path, tmp_path: Path, *flags: str, env: list[str]) -> tuple[str, str]:
    """The job submitted with --wait, succeeded: its id and what the console showed."""
    out = tmp_path / "out"
    out.mkdir()
    pairs = [item for pair in zip(["--env"] * len(env), env, strict=True) for item in pair]
    result = job(
        "submit", "--code-dir", str(code), "--boot-file", "resumable.py", "--train-url", str(out),
        "--env", f"PIDS_DIR={tmp_path}", *pairs, *flags, "--wait",
    )  # fmt: skip
    job_id = result.stdout.splitlines()[0]
    assert result.returncode == 0, result.stderr + job_logs(tmp_path / "store", job_id)
    assert f"job {job_id} succeeded" in result.stderr
    final = json.loads((out / "final.json").read_text())
    assert final["value"] == uninterrupted(2 if "--nodes" not in flags else 4)
    return job_id, result.stdout


def test_a_rank_exit_at_step_5_is_restarted_and_described(
    job: JobCli, code: Path, tmp_path: Path
) -> None:
    job_id, console = submit(
        job, code, tmp_path, "--cards", "2", "--max-restarts", "1", env=["FAULT=exit"]
    )
    # --wait's console says why the attempt ended, as the page and describe do.
    assert "attempt 0 ended (exit): rank 1 exited with 3, rank 1 (node 0, local rank 1" in console
    described = job("describe", job_id).stdout
    assert "attempts:" in described
    assert "  attempt 0: " in described
    assert "failed (exit): rank 1 (node 0, local rank 1" in described
    assert "exit code 3" in described
    assert "  attempt 1: " in described
    assert "succeeded" in described.split("  attempt 1: ")[1].splitlines()[0]
    assert "restart  attempt 0 ended (exit)" in described  # the store's event
    row = next(line for line in job("list").stdout.splitlines() if line.startswith(job_id))
    assert row.split()[-2:] == ["2", "0"]  # attempts, exit code
    store = JobStore(tmp_path / "store")
    assert store.get(job_id).attempts == 2
    (restart,) = [event for event in store.events(job_id) if event.state == "restart"]
    ended = store.get(job_id).ended
    assert ended is not None
    assert restart.time < ended - 1  # recorded as it happened, while the second attempt ran
    assert_nothing_left(tmp_path)


def test_a_hang_shows_every_rank_stack_in_describe(job: JobCli, code: Path, tmp_path: Path) -> None:
    job_id, _ = submit(
        job, code, tmp_path, "--cards", "2", "--max-restarts", "1", "--hang-timeout", HANG_TIMEOUT,
        env=["FAULT=collective"],
    )  # fmt: skip
    described = job("describe", job_id).stdout
    assert (
        f"failed (hang): node 0 failed: hang: no rank of the job wrote a line for {HANG_TIMEOUT}s"
        in (described)
    )
    # The boot file runs by its path in the node's job dir, as ModelArts runs it.
    layout = JobLayout(code.parent / "store" / job_id, job_id)
    script = layout.job_dir(0) / code.name / "resumable.py"
    stacks = [described.split(f"    stack of rank {rank}:\n")[1] for rank in (0, 1)]
    assert waits_in_all_reduce(stacks[0], script), stacks[0]
    receive = line_of("dist.recv(torch.zeros(1), src=0)")
    assert f'File "{script}", line {receive} in main' in stacks[1]
    rank_log = JobLayout(tmp_path / "store" / job_id, job_id).rank_log(1, 1).read_text()
    assert "[ascendify] hang: the stacks of rank 1" in rank_log
    assert_nothing_left(tmp_path)


def test_a_killed_node_agent_is_started_again_and_joins(
    job: JobCli, code: Path, tmp_path: Path, jobs_dir: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    submitted = job(
        "submit", "--code-dir", str(code), "--boot-file", "resumable.py", "--train-url", str(out),
        "--nodes", "2", "--cards", "2", "--max-restarts", "1", "--env", f"PIDS_DIR={tmp_path}",
        "--env", "STEP_SECONDS=0.4",
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    job_id = submitted.stdout.strip()
    store = JobStore(jobs_dir)
    layout = JobLayout(jobs_dir / job_id, job_id)
    rank_3 = layout.rank_log(3, 1)
    explain = lambda: job_logs(jobs_dir, job_id)  # noqa: E731
    wait_for(lambda: rank_3.exists() and "step 2 " in rank_3.read_text(), 90, "step 2", explain)
    (agent,) = [node.pid for node in store.nodes(job_id) if node.node == 1]
    assert agent is not None
    os.kill(agent, signal.SIGKILL)  # its ranks die with it
    wait_for(lambda: store.get(job_id).state == "succeeded", 120, "the job to succeed", explain)
    assert json.loads((out / "final.json").read_text())["value"] == uninterrupted(4)
    assert store.get(job_id).attempts == 2
    assert "rank 3 attempt 1 starts at step" in rank_3.read_text()
    assert_nothing_left(tmp_path)


def _keeper_of(job_id: str, node: int) -> psutil.Process | None:
    """The keeper process that runs ``node``'s launcher of the job on Ray (its worker's child)."""
    for process in psutil.process_iter(["cmdline"]):
        argv = process.info["cmdline"] or []
        ours = "ascendify.jobs.keeper" in argv and f"modelarts-job-{job_id}" in argv
        if ours and argv[argv.index("--node-rank") + 1] == str(node):
            return process
    return None


@RAY
def test_a_ray_node_task_that_dies_starts_again_and_joins(
    cluster: str, job: JobCli, code: Path, tmp_path: Path, jobs_dir: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    submitted = job(
        "submit", "--code-dir", str(code), "--boot-file", "resumable.py", "--train-url", str(out),
        "--engine", "ray", "--address", cluster, "--nodes", "2", "--cards", "2",
        "--max-restarts", "1", "--env", f"PIDS_DIR={tmp_path}", "--env", "STEP_SECONDS=0.4",
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    job_id = submitted.stdout.strip()
    store = JobStore(jobs_dir)
    rank_3 = JobLayout(jobs_dir / job_id, job_id).rank_log(3, 1)
    explain = lambda: job_logs(jobs_dir, job_id)  # noqa: E731
    wait_for(lambda: rank_3.exists() and "step 2 " in rank_3.read_text(), 120, "step 2", explain)
    keeper = _keeper_of(job_id, 1)
    assert keeper is not None
    keeper.parent().kill()  # the Ray worker running node 1's task dies
    wait_for(lambda: store.get(job_id).state in ("succeeded", "failed"), 180, "the end", explain)
    assert store.get(job_id).state == "succeeded", explain()
    assert json.loads((out / "final.json").read_text())["value"] == uninterrupted(4)
    assert store.get(job_id).attempts == 2
    assert "rank 3 attempt 1 starts at step" in rank_3.read_text()
    assert "node 1: its Ray task starts again" in (jobs_dir / job_id / "runner.log").read_text()
    assert_nothing_left(tmp_path)


def test_an_elastic_job_whose_node_0_tree_is_killed_succeeds_on_node_1_from_its_checkpoint(
    job: JobCli, code: Path, tmp_path: Path, jobs_dir: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    submitted = job(
        "submit", "--code-dir", str(code), "--boot-file", "resumable.py", "--train-url", str(out),
        "--engine", "local", "--nodes", "2", "--elastic", "1:2", "--max-restarts", "3",
        "--env", f"PIDS_DIR={tmp_path}", "--env", "STEPS=30", "--env", "STEP_SECONDS=0.2",
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    job_id = submitted.stdout.strip()
    store = JobStore(jobs_dir)
    layout = JobLayout(jobs_dir / job_id, job_id)
    explain = lambda: job_logs(jobs_dir, job_id)  # noqa: E731
    rank_1 = layout.rank_log(1, 0)
    wait_for(
        lambda: rank_1.exists() and "rank 1 step 3 " in rank_1.read_text(), 120, "step 3", explain
    )
    (agent,) = [node.pid for node in store.nodes(job_id) if node.node == 0]
    assert agent is not None
    tree = psutil.Process(agent)
    for process in [tree, *tree.children(recursive=True)]:  # node 0 dies: agent, store, ranks
        process.kill()
    wait_for(lambda: store.get(job_id).state in ("succeeded", "failed"), 180, "the end", explain)
    assert store.get(job_id).state == "succeeded", explain()
    final = json.loads((out / "final.json").read_text())  # the model file arrived
    assert final["value"] > 0
    assert final["attempt"] >= 1
    on_node_1 = layout.attempts(2)[1]  # the attempt node 1 ran once node 0 had gone
    assert on_node_1["membership"]["members"] == [1], explain()
    assert on_node_1["membership"]["left"] == [0]
    # Node 1's rank was rank 0 of that membership: its log is node 1's rank_0.log.
    alone = runfolder.rank_log(layout.launcher_dir(1), 0).read_text()
    resumed = re.search(r"rank 0 attempt 1 starts at step (\d+)", alone)
    assert resumed is not None, explain()
    assert int(resumed.group(1)) >= 3  # from the checkpoint, not from 0
    described = job("describe", job_id).stdout
    assert "node(s) 0 left at " in described
    assert_nothing_left(tmp_path)
