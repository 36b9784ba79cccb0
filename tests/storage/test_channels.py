"""JobChannels around real rank processes, against a real S3-protocol server."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from ascendify.storage import (
    AccessDeniedError,
    BucketNotFoundError,
    EndpointUnreachableError,
    JobChannels,
    NoSuchKeyError,
    StorageError,
    plan_channels,
)

from .conftest import ACCESS_KEY_ID, SECRET_ACCESS_KEY, Restricted, put_objects, read_objects

DATA = {f"shard{i}/part-{j}.bin": bytes([i, j]) * 512 for i in range(3) for j in range(4)}

# A rank of a training job: reads every staged input file, writes a result, may fail.
RANK = r"""
import argparse, hashlib, os, pathlib, sys
parser = argparse.ArgumentParser()
parser.add_argument("--data_url")
parser.add_argument("--train_url")
parser.add_argument("--exit-code", type=int, default=0)
args = parser.parse_args()
data = pathlib.Path(args.data_url)
names = sorted(p.relative_to(data).as_posix() for p in data.rglob("*") if p.is_file())
digest = hashlib.sha256(b"".join((data / n).read_bytes() for n in names)).hexdigest()
out = pathlib.Path(args.train_url)
out.mkdir(parents=True, exist_ok=True)
(out / f"rank{os.environ['RANK']}.txt").write_text(f"{len(names)} {digest}")
sys.exit(args.exit_code)
"""


def expected_result() -> bytes:
    digest = hashlib.sha256(b"".join(DATA[name] for name in sorted(DATA))).hexdigest()
    return f"{len(DATA)} {digest}".encode()


def run_ranks(argv: list[str], count: int = 2) -> list[int]:
    """Start ``count`` rank processes at once, wait for all, return their exit codes."""
    ranks = [
        subprocess.Popen(argv, env={"RANK": str(rank), "PATH": "/usr/bin:/bin"})
        for rank in range(count)
    ]
    return [rank.wait(timeout=60) for rank in ranks]


def modelarts_env(s3_env: dict[str, str]) -> dict[str, str]:
    """The same server the ModelArts way: S3_ENDPOINT without a scheme, S3_USE_HTTPS=0."""
    env = {k: v for k, v in s3_env.items() if k != "AWS_ENDPOINT_URL"}
    return {**env, "S3_ENDPOINT": urlsplit(s3_env["AWS_ENDPOINT_URL"]).netloc, "S3_USE_HTTPS": "0"}


def assert_no_secret(texts: list[str]) -> None:
    for text in texts:
        assert ACCESS_KEY_ID not in text
        assert SECRET_ACCESS_KEY not in text


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["s3", "obs"])
def test_two_rank_job_reads_staged_inputs_and_outputs_are_uploaded(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path, scheme: str
) -> None:
    put_objects(s3, bucket, {f"dataset/{k}": v for k, v in DATA.items()})
    env = s3_env if scheme == "s3" else modelarts_env(s3_env)
    argv = [
        sys.executable,
        "-c",
        RANK,
        f"--data_url={scheme}://{bucket}/dataset/",
        "--train_url",
        f"{scheme}://{bucket}/results/",
    ]
    logs: list[str] = []
    plan = plan_channels(argv, env, tmp_path)
    with JobChannels(plan, upload_interval=0, log=logs.append) as channels:
        assert channels.argv[3] == f"--data_url={tmp_path / 'inputs' / 'data_url_0'}/"
        assert run_ranks(channels.argv) == [0, 0]
    assert read_objects(s3, bucket, "results/") == {
        "rank0.txt": expected_result(),
        "rank1.txt": expected_result(),
    }
    assert len(channels.downloads["data_url"].copied) == len(DATA)
    assert any("train_url: uploaded 2 files" in line for line in logs)
    staged = tmp_path / "outputs" / "train_url_0"
    assert (
        f"ascendify: train_url: {staged} -> {scheme}://{bucket}/results/: uploaded at the end"
        in logs
    )
    assert_no_secret(logs)


def job(bucket: str, env: dict[str, str], workdir: Path, scheme: str = "s3") -> Any:
    argv = [
        "train.py",
        f"--data_url={scheme}://{bucket}/dataset",
        f"--train_url={scheme}://{bucket}/out",
    ]
    return plan_channels(argv, env, workdir)


def test_outputs_uploaded_when_the_body_raises(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    put_objects(s3, bucket, {f"dataset/{k}": v for k, v in DATA.items()})
    logs: list[str] = []
    plan = job(bucket, s3_env, tmp_path)

    def failing_job() -> None:
        with JobChannels(plan, upload_interval=0, log=logs.append):
            (tmp_path / "outputs" / "train_url_0" / "last.ckpt").write_bytes(b"weights")
            raise RuntimeError("rank 1 died")

    with pytest.raises(RuntimeError, match="rank 1 died"):
        failing_job()
    assert read_objects(s3, bucket, "out/") == {"last.ckpt": b"weights"}
    assert any("train_url: uploaded 1 file (" in line for line in logs)


@pytest.mark.slow
def test_outputs_uploaded_when_a_rank_exits_non_zero(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    put_objects(s3, bucket, {f"dataset/{k}": v for k, v in DATA.items()})
    argv = [
        sys.executable,
        "-c",
        RANK,
        f"--data_url=s3://{bucket}/dataset",
        f"--train_url=s3://{bucket}/out",
        "--exit-code=3",
    ]
    with JobChannels(plan_channels(argv, s3_env, tmp_path), upload_interval=0, log=[].append) as ch:
        assert run_ranks(ch.argv) == [3, 3]
    assert sorted(read_objects(s3, bucket, "out/")) == ["rank0.txt", "rank1.txt"]


def test_periodic_upload_is_seen_while_the_job_runs(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    put_objects(s3, bucket, {"dataset/x": b"x"})
    plan = job(bucket, s3_env, tmp_path)
    with JobChannels(plan, upload_interval=0.2, log=[].append) as channels:
        (tmp_path / "outputs" / "train_url_0" / "step1.ckpt").write_bytes(b"step 1")
        deadline = time.monotonic() + 120  # every 0.2 s; without periodic uploads, never
        while "step1.ckpt" not in read_objects(s3, bucket, "out/"):
            assert time.monotonic() < deadline, "no periodic upload within 120 s"
            time.sleep(0.05)
        rounds_during_job = len(channels.uploads["train_url"].rounds)
    history = channels.uploads["train_url"]
    # A periodic round may still be under way when the object shows: it is recorded at exit.
    assert len(history.rounds) >= max(rounds_during_job, 1) + 1  # plus the final one
    copied = [name for upload in history.rounds for name in upload.copied]
    assert copied.count("step1.ckpt") == 1  # by a periodic round, never again
    assert history.rounds[-1].copied == ()  # nothing new since the periodic round
    assert all(t.name != "ascendify-upload" for t in threading.enumerate())


def test_second_job_skips_inputs_already_staged(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    put_objects(s3, bucket, {f"dataset/{k}": v for k, v in DATA.items()})
    plan = job(bucket, s3_env, tmp_path)
    with JobChannels(plan, upload_interval=0, log=[].append) as first:
        pass
    put_objects(s3, bucket, {"dataset/shard0/part-0.bin": b"replaced"})
    with JobChannels(plan, upload_interval=0, log=[].append) as second:
        pass
    assert len(first.downloads["data_url"].copied) == len(DATA)
    assert second.downloads["data_url"].copied == ("shard0/part-0.bin",)
    assert len(second.downloads["data_url"].skipped) == len(DATA) - 1


def test_failed_final_upload_is_raised_after_success_and_other_outputs_still_go(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    put_objects(s3, bucket, {"dataset/x": b"x"})
    target = f"{bucket}-out"
    s3.create_bucket(Bucket=target)
    argv = [
        f"--data_url=s3://{bucket}/dataset",
        f"--train_url=s3://{target}/run",
        f"--ckpt_url=s3://{bucket}/ckpt",
    ]
    plan = plan_channels(argv, s3_env, tmp_path, outputs=("ckpt",))

    def job_losing_its_bucket() -> None:
        with JobChannels(plan, upload_interval=0, log=[].append):
            (tmp_path / "outputs" / "ckpt_url_0" / "model.pt").write_bytes(b"kept")
            s3.delete_bucket(Bucket=target)

    with pytest.raises(BucketNotFoundError, match=repr(target)):
        job_losing_its_bucket()
    assert read_objects(s3, bucket, "ckpt/") == {"model.pt": b"kept"}


def test_failed_final_upload_is_logged_when_the_body_raised(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    put_objects(s3, bucket, {"dataset/x": b"x"})
    target = f"{bucket}-gone"
    s3.create_bucket(Bucket=target)
    plan = plan_channels(
        [f"--data_url=s3://{bucket}/dataset", f"--train_url=s3://{target}/run"], s3_env, tmp_path
    )
    logs: list[str] = []

    def failing_job() -> None:
        with JobChannels(plan, upload_interval=0, log=logs.append):
            s3.delete_bucket(Bucket=target)
            raise KeyError("the job's own error")

    with pytest.raises(KeyError):
        failing_job()
    assert any("final upload failed" in line and target in line for line in logs)


ENTER_ERRORS: dict[str, type[StorageError]] = {
    "missing bucket": BucketNotFoundError,
    "missing key": NoSuchKeyError,
    "unreachable endpoint": EndpointUnreachableError,
}


@pytest.mark.parametrize(
    "case",
    [
        # Waits out the product's retries of a refused connection (2 to 7 s; it has no option to
        # retry less): see test_copy.test_unreachable_endpoint.
        pytest.param(case, marks=pytest.mark.slow) if case == "unreachable endpoint" else case
        for case in ENTER_ERRORS
    ],
)
def test_enter_fails_before_anything_is_staged(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path, case: str
) -> None:
    put_objects(s3, bucket, {"dataset/x": b"x"})
    env, data, out = s3_env, f"s3://{bucket}/dataset", f"s3://{bucket}/out"
    if case == "missing bucket":
        out = "s3://no-such-bucket-for-outputs/out"
    elif case == "missing key":
        data = f"s3://{bucket}/no/such/prefix/"
    else:
        env = {**s3_env, "AWS_ENDPOINT_URL": "http://127.0.0.1:9"}
    logs: list[str] = []
    plan = plan_channels([f"--data_url={data}", f"--train_url={out}"], env, tmp_path)
    channels = JobChannels(plan, upload_interval=0.1, log=logs.append)
    with pytest.raises(ENTER_ERRORS[case]) as caught:
        channels.__enter__()
    assert not (tmp_path / "inputs").exists()
    assert not (tmp_path / "outputs").exists()
    assert all(t.name != "ascendify-upload" for t in threading.enumerate())
    assert logs == []
    assert_no_secret([str(caught.value)])


def test_enter_fails_on_access_denied(restricted: Restricted, tmp_path: Path) -> None:
    argv = [f"--data_url=s3://{restricted.allowed}", f"--train_url=s3://{restricted.forbidden}/o"]
    plan = plan_channels(argv, restricted.env, tmp_path)
    with pytest.raises(AccessDeniedError, match=restricted.forbidden) as caught:
        JobChannels(plan, upload_interval=0, log=[].append).__enter__()
    assert not (tmp_path / "inputs").exists()
    for secret in plan.settings.secrets():
        assert secret not in str(caught.value)
