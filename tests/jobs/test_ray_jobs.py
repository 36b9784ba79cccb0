"""The Ray engine against a real two-node Ray cluster on loopback addresses.

The cluster (the session fixture ``cluster`` of tests/jobs/conftest.py) costs about 20 s to start
on a 2-core machine, so this module keeps to a few jobs.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import tempfile
import time
from pathlib import Path

import pytest

from ascendify.jobs.store import JobStore
from tests.jobs.conftest import (
    RAY,
    JobCli,
    S3Channel,
    job_logs,
    pids,
    probe_ranks,
    running,
    wait_for,
)
from tests.jobs.ray_cluster import HEAD_ADDRESS, NODE_ADDRESS, ray_cluster
from tests.storage.conftest import read_objects

pytestmark = [pytest.mark.slow, RAY]


def test_two_nodes_on_ray(
    cluster: str, job: JobCli, project: Path, tmp_path: Path, s3_channel: S3Channel
) -> None:
    out = tmp_path / "out"
    spec = tmp_path / "job.yaml"
    spec.write_text(
        f"code_dir: {project}\nboot_file: rank.py\nengine: ray\naddress: '{cluster}'\n"
        f"nodes: 2\ncards: 2\ntrain_url: {out}\nlog_url: s3://{s3_channel.bucket}/logs/\n"
        "hyper: {mode: probe}\n"
    )
    result = job("submit", str(spec), "--wait", env=s3_channel.env)
    job_id = result.stdout.splitlines()[0]
    assert result.returncode == 0, job("describe", job_id).stdout
    probe_ranks(out, job("logs", job_id).stdout)
    described = job("describe", job_id).stdout
    # STRICT_SPREAD: one node of the job on each Ray node (which one is node 0 is Ray's choice).
    placed = {
        line.split("(")[1].split(")")[0] for line in described.splitlines() if "  node " in line
    }
    assert placed == {HEAD_ADDRESS, NODE_ADDRESS}
    uploaded = read_objects(s3_channel.client, s3_channel.bucket, "logs/")
    assert f"modelarts-job-{job_id}-worker-1.log" in uploaded
    # Each node unpacked the code in a temporary dir of its own, removed when it finished.
    assert list(Path(tempfile.gettempdir()).glob(f"ascendify-job-{job_id}-*")) == []
    secret = s3_channel.env["AWS_SECRET_ACCESS_KEY"].encode()
    store_files = [path for path in (tmp_path / "store").rglob("*") if path.is_file()]
    assert [path for path in store_files if secret in path.read_bytes()] == []
    assert all(secret not in content for content in uploaded.values())


def test_an_ascend_flavor_gets_rays_npu_assignment(
    cluster: str, job: JobCli, project: Path
) -> None:
    show = "import os; print('VISIBLE=' + os.environ.get('ASCEND_RT_VISIBLE_DEVICES', '-'))"
    result = job(
        "submit", "--code-dir", str(project), "--engine", "ray", "--address", cluster,
        "--flavor", "Ascend: 2 | ARM: 24 cores 192 GB", "--hang-timeout", "0", "--wait",
        "--boot-command", f'python -c "{show}"',
    )  # fmt: skip
    job_id = result.stdout.splitlines()[0]
    assert result.returncode == 0, job("describe", job_id).stdout
    logs = job("logs", job_id).stdout
    # Both ranks of the node see the two NPUs Ray assigned to the node's task.
    assert sorted(re.findall(r"VISIBLE=(\S+)", logs)) == ["0,1", "0,1"]


def test_stop_on_ray_leaves_no_rank(
    cluster: str, job: JobCli, project: Path, tmp_path: Path, s3_channel: S3Channel,
) -> None:  # fmt: skip
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    submitted = job(
        "submit", "--code-dir", str(project), "--boot-file", "rank.py", "--engine", "ray",
        "--address", cluster, "--nodes", "2", "--cards", "2", "--hyper", "mode=hang",
        "--train-url", f"s3://{s3_channel.bucket}/run/", "--env", f"PIDS_DIR={pid_dir}",
        env=s3_channel.env,
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    job_id = submitted.stdout.strip()
    wait_for(lambda: len(pids(pid_dir)) == 4, 120, "4 ranks running")
    rank_pids = list(pids(pid_dir).values())
    # The logs come back while the job runs.
    wait_for(
        lambda: job("logs", job_id).stdout.count("]: waiting to be stopped") == 4, 20, "live logs"
    )
    assert job("logs", job_id, "--rank", "3").stdout.startswith("rank 3 of 4 starts")
    started = time.monotonic()
    stopped = job("stop", job_id, env=s3_channel.env)
    assert stopped.returncode == 0, stopped.stderr
    took = f"`job stop` took {time.monotonic() - started:.1f}s"
    explain = lambda: f"{took}\n{job_logs(tmp_path / 'store', job_id)}"  # noqa: E731
    wait_for(lambda: not running(rank_pids), 60 - (time.monotonic() - started), "ranks", explain)
    assert JobStore(tmp_path / "store").get(job_id).state == "stopped"
    expected = {"partial.txt": b"written before the stop"}
    # The launcher uploads once its ranks have ended: the object may come a moment later.
    wait_for(
        lambda: read_objects(s3_channel.client, s3_channel.bucket, "run/") == expected,
        30,
        "the outputs uploaded at the stop",
        explain,
    )


def test_killed_runner_on_ray_leaves_no_rank(
    cluster: str, job: JobCli, project: Path, tmp_path: Path
) -> None:
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    submitted = job(
        "submit", "--code-dir", str(project), "--boot-file", "rank.py", "--engine", "ray",
        "--address", cluster, "--nodes", "2", "--cards", "2", "--hyper", "mode=hang",
        "--env", f"PIDS_DIR={pid_dir}",
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    job_id = submitted.stdout.strip()
    wait_for(lambda: len(pids(pid_dir)) == 4, 120, "4 ranks running")
    runner = JobStore(tmp_path / "store").get(job_id).runner_pid
    assert runner is not None
    os.kill(runner, signal.SIGKILL)
    wait_for(lambda: not running([runner]), 10, "the runner to die")
    listed = job("list").stdout
    assert "failed (runner lost)" in next(line for line in listed.splitlines() if job_id in line)
    # Ray ends the node tasks; each node agent then stops its ranks within the grace period.
    wait_for(lambda: not running(list(pids(pid_dir).values())), 30, "orphan ranks to end")
    # A worker killed outright cannot remove its node's unpacked code (see docs/jobs.md, Limits).
    for leftover in Path(tempfile.gettempdir()).glob(f"ascendify-job-{job_id}-*"):
        shutil.rmtree(leftover)


def test_a_cluster_that_asks_for_a_token_is_checked_at_submit(
    job: JobCli, jobs_dir: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without the check, the submit was accepted and the runner's log alone said "Failed to
    # connect"; the job stayed without a verdict the user would see.
    token = secrets.token_hex(16)
    monkeypatch.setenv("RAY_AUTH_MODE", "token")  # the head, and every process below, use it
    monkeypatch.setenv("RAY_AUTH_TOKEN", token)
    with ray_cluster(cpus_per_node=1, nodes=1) as address:
        spec = tmp_path / "job.yaml"
        spec.write_text(
            f"code_dir: {project}\nboot_file: rank.py\nengine: ray\naddress: '{address}'\n"
            f"cards: 1\ntrain_url: {tmp_path / 'out'}\nhyper: {{mode: probe}}\n"
        )
        for env in ({"RAY_AUTH_MODE": "disabled"}, {"RAY_AUTH_TOKEN": secrets.token_hex(16)}):
            refused = job("submit", str(spec), env=env)
            assert refused.returncode == 2, refused.stderr
            assert f"the Ray cluster at {address} refused this machine's token" in refused.stderr
            assert "Traceback" not in refused.stderr
        assert JobStore(jobs_dir).jobs() == []  # nothing recorded for a refused submit
        accepted = job("submit", str(spec), "--wait")
        assert accepted.returncode == 0, accepted.stderr
        assert (tmp_path / "out").is_dir()
