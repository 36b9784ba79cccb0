"""Faults around a job (what its ranks leave, a full disk, where it is submitted from, several
nodes writing the same names): the job ends with its outputs kept and a named cause, and the
``job`` commands keep answering (real runners and ranks, a real tmpfs, a real S3 server)."""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ascendify.jobs.store import JobStore
from tests.conftest import HANG_BOUND, ascendify_env, tmpfs
from tests.jobs.conftest import JobCli, S3Channel, running
from tests.storage.conftest import read_objects

pytestmark = pytest.mark.slow  # every test here starts processes

# Writes the model to --train_url, then whatever $FAULT asks for.
RANK = """\
import argparse, os, pathlib, sys, time
parser = argparse.ArgumentParser()
parser.add_argument("--train_url")
args = parser.parse_args()
out = pathlib.Path(args.train_url)
out.mkdir(parents=True, exist_ok=True)
(out / "model.pt").write_text(f"weights of node {os.environ['RANK']}")
pathlib.Path(os.environ["PIDS_DIR"], f"rank_{os.environ['RANK']}.pid").write_text(str(os.getpid()))
fault = os.environ.get("FAULT", "")
if fault == "links":
    logs = pathlib.Path(os.environ["ASCEND_PROCESS_LOG_PATH"])
    (logs / "secret").symlink_to(os.environ["SECRET"])
    (logs / "loop").symlink_to(".")
    (logs / "a").symlink_to("b")
    (logs / "b").symlink_to("a")
    os.mkfifo(logs / "pipe")
if fault == "noisy":
    line = "x" * 1023 + "\\n"
    for _ in range(3 * 1024):
        sys.stdout.write(line)
    sys.stdout.flush()
    pathlib.Path(os.environ["PIDS_DIR"], "full").write_text(repr(time.time()))
print("done", flush=True)
"""


@pytest.fixture
def code(tmp_path: Path) -> Path:
    folder = tmp_path / "code"
    folder.mkdir()
    (folder / "train.py").write_text(RANK)
    return folder


@pytest.fixture
def pid_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "pids"
    folder.mkdir()
    return folder


def _rank_pids(pid_dir: Path) -> list[int]:
    return [int(p.read_text()) for p in pid_dir.glob("rank_*.pid")]


def test_links_a_rank_leaves_among_its_logs_are_not_followed(
    job: JobCli, code: Path, tmp_path: Path, jobs_dir: Path, pid_dir: Path
) -> None:
    secret = tmp_path / "private.txt"
    secret.write_text("PRIVATE")
    copy = tmp_path / "log-copy"
    result = job(
        "submit", "--code-dir", str(code), "--boot-file", "train.py", "--wait",
        "--train-url", str(tmp_path / "out"), "--log-url", str(copy),
        "--env", "FAULT=links", "--env", f"SECRET={secret}", "--env", f"PIDS_DIR={pid_dir}",
    )  # fmt: skip
    job_id = result.stdout.splitlines()[0]
    record = JobStore(jobs_dir).get(job_id)
    assert (record.state, record.cause) == ("succeeded", None), result.stderr
    assert (tmp_path / "out" / "model.pt").read_text() == "weights of node 0"
    copied = copy / "worker-0" / "ascend" / "rank_0"
    assert (copied / "secret").is_symlink()  # a link, as the rank left it: not the file's copy
    assert not any(
        p.is_file() and not p.is_symlink() and p.read_bytes() == b"PRIVATE" for p in copy.rglob("*")
    )
    assert (copied / "loop").is_symlink()
    runner_log = (jobs_dir / job_id / "runner.log").read_text()
    assert "log_url: not copied:" in runner_log
    assert "pipe" in runner_log
    assert (copy / "worker-0" / "rank_0.log").read_text().startswith("done")
    assert running(_rank_pids(pid_dir)) == []


def _file_size_limit(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_full_log_disk_fails_the_job_by_name_and_keeps_the_model(
    code: Path, tmp_path: Path, jobs_dir: Path, pid_dir: Path
) -> None:
    # A file size limit on the runner and all below it: the rank's log reaches it, its model and
    # the job store do not (the other way to fill a disk without filling the store's own).
    result = subprocess.run(
        [sys.executable, "-m", "ascendify", "job", "submit", "--code-dir", str(code),
         "--boot-file", "train.py", "--train-url", str(tmp_path / "out"), "--wait",
         "--env", "FAULT=noisy", "--env", f"PIDS_DIR={pid_dir}"],
        env=ascendify_env({"ASCENDIFY_JOBS_DIR": str(jobs_dir)}),
        preexec_fn=lambda: _file_size_limit(1 << 20),
        capture_output=True, text=True, timeout=HANG_BOUND, check=False,
    )  # fmt: skip
    job_id = result.stdout.splitlines()[0]
    record = JobStore(jobs_dir).get(job_id)
    assert record.state == "failed", result.stderr
    assert record.cause is not None
    assert "disk full: " in record.cause
    assert "rank_0.log" in record.cause
    assert result.returncode == 1
    assert (tmp_path / "out" / "model.pt").read_text() == "weights of node 0"
    assert running(_rank_pids(pid_dir)) == []
    assert record.ended is not None
    full = float((pid_dir / "full").read_text())
    print(f"disk full -> job failed: {record.ended - full:.2f} s")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs for the job store: a disk that fills."""
    with tmpfs(tmp_path / "disk", "4m") as disk:
        yield disk


def _fill(disk: Path, leave: int) -> Path:
    """Fill ``disk`` until ``leave`` bytes are free (0: completely)."""
    filler = disk / "filler"
    with filler.open("wb", buffering=0) as stream:  # unbuffered: nothing left to flush at close
        free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize - leave
        with contextlib.suppress(OSError):
            stream.write(b"\0" * max(0, free))
            while leave == 0:
                stream.write(b"\0" * 4096)
    return filler


def test_job_commands_answer_and_submit_keeps_nothing_while_the_jobs_disk_is_full(
    job: JobCli, code: Path, tmp_path: Path, small_disk: Path, pid_dir: Path
) -> None:
    env = {"ASCENDIFY_JOBS_DIR": str(small_disk)}
    args = ("--code-dir", str(code), "--boot-file", "train.py", "--env", f"PIDS_DIR={pid_dir}")
    first = job("submit", *args, "--train-url", str(tmp_path / "out"), "--wait", env=env)
    job_id = first.stdout.splitlines()[0]
    assert first.returncode == 0, first.stderr
    store = JobStore(small_disk)
    lost = store.create(store.get(job_id).spec)  # a job whose runner is gone: list must mark it
    ended = subprocess.Popen(["true"])
    ended.wait()
    store.set_runner(lost.id, ended.pid, 0.0)
    (code / "weights.bin").write_bytes(os.urandom(1 << 20))  # more than the disk has left

    filler = _fill(small_disk, leave=256 * 1024)
    half = job("submit", *args, env=env)
    assert half.returncode == 2, half.stderr
    assert "could not be submitted" in half.stderr or "cannot be written" in half.stderr
    assert "Traceback" not in half.stderr

    filler.unlink()
    _fill(small_disk, leave=0)
    for command in (("list",), ("describe", job_id), ("logs", job_id), ("stop", job_id)):
        answer = job(*command, env=env)
        assert answer.returncode in (0, 1, 2), (command, answer.stderr)
        assert "internal error" not in answer.stderr
    assert job_id in job("list", env=env).stdout
    full = job("submit", *args, env=env)
    assert full.returncode == 2, full.stderr
    assert "cannot be written" in full.stderr or "could not be submitted" in full.stderr

    (small_disk / "filler").unlink()
    jobs = JobStore(small_disk).jobs()
    assert sorted(j.id for j in jobs) == sorted([job_id, lost.id])  # no half-submitted job
    assert sorted(p.name for p in small_disk.iterdir() if len(p.name) == 12) == [job_id]


def test_submitting_from_the_folder_that_holds_the_store_does_not_copy_it(
    job: JobCli, code: Path, pid_dir: Path
) -> None:
    store = code / "jobs"
    result = job(
        "submit", "--code-dir", str(code), "--boot-file", "train.py", "--wait",
        "--train-url", str(code / "out"), "--env", f"PIDS_DIR={pid_dir}",
        env={"ASCENDIFY_JOBS_DIR": str(store)}, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    job_id = result.stdout.splitlines()[0]
    snapshot = store / job_id / "code"
    assert (snapshot / "train.py").is_file()
    assert not (snapshot / "jobs").exists()
    assert (code / "out" / "model.pt").read_text() == "weights of node 0"


def test_nodes_upload_same_named_files_to_their_own_prefixes(
    job: JobCli, code: Path, s3_channel: S3Channel, jobs_dir: Path, pid_dir: Path
) -> None:
    s3, bucket, s3_env = s3_channel
    result = job(
        "submit", "--code-dir", str(code), "--boot-file", "train.py", "--nodes", "2",
        "--train-url", f"s3://{bucket}/run/", "--env", f"PIDS_DIR={pid_dir}", "--wait",
        env=s3_env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert read_objects(s3, bucket, "run/") == {
        "model.pt": b"weights of node 0",  # where a one-node job puts it
        "node-1/model.pt": b"weights of node 1",
    }
    assert running(_rank_pids(pid_dir)) == []
