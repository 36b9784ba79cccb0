"""The local engine with real processes: 2 nodes x 2 ranks on loopback addresses."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from importlib import resources
from pathlib import Path

import pytest

from ascendify.jobs.store import JobStore
from tests.conftest import HANG_BOUND
from tests.jobs.conftest import JobCli, S3Channel, pids, probe_ranks, running, wait_for
from tests.storage.conftest import read_objects

pytestmark = pytest.mark.slow

SECRET = "s3cr3t-ascendify-storage-test-value"  # the S3 test server's, as tests/storage give it


def _submit(job: JobCli, *args: str, env: dict[str, str] | None = None) -> str:
    result = job("submit", *args, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()[0]  # --wait follows with the logs


def _state(jobs_dir: Path, job_id: str) -> str:
    return JobStore(jobs_dir).get(job_id).state


def test_two_nodes_two_ranks_probe(job: JobCli, project: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    job_id = _submit(
        job, "--code-dir", str(project), "--boot-file", "rank.py", "--nodes", "2", "--cards", "2",
        "--hyper", "mode=probe", "--train-url", str(out), "--name", "probe",
    )  # fmt: skip
    waited = job("submit", "--help")  # the CLI is not blocked by a running job
    assert waited.returncode == 0
    result = job("logs", job_id, "-f")
    assert result.returncode == 0, result.stderr
    envs = probe_ranks(out, job("logs", job_id).stdout)
    assert all(env["LOCAL_RANK"] == str(rank % 2) for rank, env in envs.items())
    assert job("logs", job_id, "--rank", "3").stdout.startswith("rank 3 of 4 starts")
    listed = job("list").stdout.splitlines()
    assert listed[0].split()[:3] == ["ID", "NAME", "ENGINE"]
    row = next(line for line in listed if line.startswith(job_id))
    assert row.split()[1:7] == ["probe", "local", "2", "x", "2", "succeeded"]
    assert row.split()[-1] == "0"
    described = job("describe", job_id).stdout
    assert "node 1 (127.0.0.2): exit code 0; rank 2: 0, rank 3: 0" in described
    layout_logs = sorted(p.name for p in (tmp_path / "store" / job_id / "logs").glob("*"))
    assert f"modelarts-job-{job_id}-worker-1.log" in layout_logs
    assert f"modelarts-job-{job_id}-proc-rank-3-device-1.txt" in layout_logs


def test_bundled_example_writes_to_s3_and_keeps_credentials_out(
    job: JobCli, tmp_path: Path, s3_channel: S3Channel, jobs_dir: Path
) -> None:
    s3, bucket, s3_env = s3_channel
    example = resources.files("ascendify") / "examples" / "gpu_classifier"
    spec = tmp_path / "job.toml"
    spec.write_text(
        f'code_dir = "{example}"\nboot_file = "train.py"\nauto = true\nnodes = 2\ncards = 2\n'
        f'flavor = "Ascend: 2 | ARM: 24 cores 96 GB"\ntrain_url = "s3://{bucket}/model/"\n'
        "[hyper]\nepochs = 1\n"
    )
    job_id = _submit(job, str(spec), "--wait", env=s3_env)
    record = JobStore(jobs_dir).get(job_id)
    assert record.state == "succeeded", job("describe", job_id).stdout
    assert "model.pt" in read_objects(s3, bucket, "model/")
    assert "epoch 0 loss" in job("logs", job_id).stdout
    leaked = [
        path
        for path in jobs_dir.rglob("*")
        if path.is_file() and SECRET.encode() in path.read_bytes()
    ]
    assert leaked == []
    assert SECRET not in job("describe", job_id, env=s3_env).stdout


def test_stop_ends_every_rank_and_uploads_outputs(
    job: JobCli, project: Path, tmp_path: Path, s3_channel: S3Channel, jobs_dir: Path
) -> None:
    s3, bucket, s3_env = s3_channel
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    job_id = _submit(
        job, "--code-dir", str(project), "--boot-file", "rank.py", "--nodes", "2", "--cards", "2",
        "--hyper", "mode=hang", "--train-url", f"s3://{bucket}/run/", "--env", f"PIDS_DIR={pid_dir}",
        env=s3_env,
    )  # fmt: skip
    wait_for(lambda: len(pids(pid_dir)) == 4, 120, "4 ranks running")
    rank_pids = list(pids(pid_dir).values())
    started = time.monotonic()
    stopped = job("stop", job_id, env=s3_env)
    assert stopped.returncode == 0, stopped.stderr
    wait_for(lambda: not running(rank_pids), 60 - (time.monotonic() - started), "ranks to end")
    assert _state(jobs_dir, job_id) == "stopped"
    assert read_objects(s3, bucket, "run/") == {"partial.txt": b"written before the stop"}


def test_rank_failure_is_named(job: JobCli, project: Path, jobs_dir: Path) -> None:
    result = job(
        "submit", "--code-dir", str(project), "--boot-file", "rank.py", "--nodes", "2",
        "--cards", "2", "--hyper", "mode=fail", "--hyper", "fail_rank=3", "--wait",
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    job_id = result.stdout.splitlines()[0]
    assert f"job {job_id} failed: node 1 rank 3: exit code 3" in result.stderr
    record = JobStore(jobs_dir).get(job_id)
    assert (record.state, record.exit_code) == ("failed", 3)
    assert record.cause == "node 1 rank 3: exit code 3"
    described = job("describe", job_id).stdout
    assert "node 1, rank 3 (local rank 1, device 1): exit code 3" in described
    assert "rank 3 gives up: simulated failure" in described


def test_killed_runner_is_lost_and_leaves_no_rank(
    job: JobCli, project: Path, tmp_path: Path, jobs_dir: Path
) -> None:
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    job_id = _submit(
        job, "--code-dir", str(project), "--boot-file", "rank.py", "--nodes", "2", "--cards", "2",
        "--hyper", "mode=hang", "--env", f"PIDS_DIR={pid_dir}",
    )  # fmt: skip
    wait_for(lambda: len(pids(pid_dir)) == 4, 120, "4 ranks running")
    runner = JobStore(jobs_dir).get(job_id).runner_pid
    assert runner is not None
    os.kill(runner, signal.SIGKILL)
    wait_for(lambda: not running([runner]), 10, "the runner to die")
    listed = job("list").stdout
    assert "failed (runner lost)" in next(line for line in listed.splitlines() if job_id in line)
    wait_for(lambda: not running(list(pids(pid_dir).values())), 15, "orphan ranks to end")


def test_concurrent_submits_are_all_recorded(job: JobCli, project: Path, jobs_dir: Path) -> None:
    (project / "quick.py").write_text("print('quick')\n")
    env = os.environ | {"ASCENDIFY_JOBS_DIR": str(jobs_dir)}
    from tests.conftest import ascendify_env

    command = ["python", "-m", "ascendify", "job", "submit", "--code-dir", str(project),
               "--boot-file", "quick.py"]  # fmt: skip
    processes = [
        subprocess.Popen(command, env=ascendify_env(env), stdout=subprocess.PIPE, text=True)
        for _ in range(20)
    ]
    ids = {process.communicate(timeout=HANG_BOUND)[0].strip() for process in processes}
    assert all(process.returncode == 0 for process in processes)
    store = JobStore(jobs_dir)
    assert len(ids) == 20
    assert {record.id for record in store.jobs()} == ids
    wait_for(lambda: all(r.state == "succeeded" for r in store.jobs()), 180, "20 jobs to succeed")


def test_pre_start_rerun_and_rm(job: JobCli, project: Path, jobs_dir: Path) -> None:
    (project / "quick.py").write_text("import os\nprint('quick sees', os.environ['PRE'])\n")
    (project / "ma-pre-start.sh").write_text(
        'echo "pre-start ran in $PWD"\nexit "${PRE_EXIT:-0}"\n'
    )
    result = job(
        "submit", "--code-dir", str(project), "--boot-file", "quick.py", "--env", "PRE=yes",
        "--wait",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    logs = job("logs", first).stdout
    assert logs.index("pre-start ran in") < logs.index("[rank 0]: quick sees yes")
    again = job("rerun", first)
    assert again.returncode == 0, again.stderr
    second = again.stdout.strip()
    store = JobStore(jobs_dir)
    wait_for(lambda: store.get(second).state == "succeeded", 60, "the rerun to succeed")
    assert store.get(second).rerun_of == first
    assert job("rm", first).returncode == 0
    assert not (jobs_dir / first).exists()
    assert [record.id for record in store.jobs()] == [second]
    failing = job(
        "submit", "--code-dir", str(project), "--boot-file", "quick.py", "--env", "PRE_EXIT=5",
        "--env", "PRE=x", "--wait",
    )  # fmt: skip
    assert failing.returncode == 1
    assert "failed: node 0: ma-pre-start.sh exited with 5" in failing.stderr


_SECRETS = {
    "GITHUB_PAT": "ghp-value-from-the-shell-1f3a",  # --env NAME: from the submitting environment
    "OPENAI_API_KEY": "sk-value-on-the-command-line-77b2",  # --env NAME=VALUE
}
_SHOW_SECRETS = """import json, os, sys
out = sys.argv[-1].split("=", 1)[1]
names = ("GITHUB_PAT", "OPENAI_API_KEY")
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "seen.json"), "w") as handle:
    json.dump({name: os.environ.get(name) for name in names}, handle)
"""


def test_secrets_reach_the_ranks_and_nothing_else(
    job: JobCli, project: Path, tmp_path: Path, jobs_dir: Path
) -> None:
    (project / "secrets.py").write_text(_SHOW_SECRETS)
    out = tmp_path / "out"
    result = job(
        "submit", "--code-dir", str(project), "--boot-file", "secrets.py", "--wait",
        "--env", "GITHUB_PAT", "--env", f"OPENAI_API_KEY={_SECRETS['OPENAI_API_KEY']}",
        "--hyper", "password=not-a-real-one", "--train-url", str(out),
        env={"GITHUB_PAT": _SECRETS["GITHUB_PAT"]},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "hyperparameter 'password' looks like a secret" in result.stderr
    assert "--env PASSWORD" in result.stderr
    assert json.loads((out / "seen.json").read_text()) == _SECRETS
    job_id = result.stdout.splitlines()[0]
    stored = [path for path in jobs_dir.rglob("*") if path.is_file()]
    assert any(path.name == "jobs.db" for path in stored)
    for value in _SECRETS.values():
        assert [path for path in stored if value.encode() in path.read_bytes()] == []
        assert value not in job("describe", job_id).stdout
