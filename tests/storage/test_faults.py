"""Faults of the object store and of what a job leaves: every file that can arrive arrives, and
nothing waits forever (real S3 server, a server that never answers, a slow link, real signals)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from ascendify.storage import (
    EndpointUnreachableError,
    JobChannels,
    S3Settings,
    copy_tree,
    plan_channels,
)
from ascendify.storage._copy import partial_dir
from ascendify.storage._remote import DEFAULT_READ_TIMEOUT, TRANSFER_RETRIES
from tests.conftest import HANG_BOUND, RunCli, ascendify_env

from .conftest import SlowProxy, enforced_policy, put_objects, read_objects

BAD_NAME = os.fsdecode(b"bad\xffname.bin")  # a byte that is not UTF-8
# A silent store fails after one attempt of one second, and with credentials to sign with.
FAST_FAILURE = {
    "ASCENDIFY_S3_READ_TIMEOUT": "1",
    "AWS_MAX_ATTEMPTS": "1",
    "AWS_ACCESS_KEY_ID": "AKIASILENTSTORETEST",
    "AWS_SECRET_ACCESS_KEY": "silent-store-test-secret",
}


def test_an_upload_escapes_names_the_store_cannot_hold_and_uploads_the_rest(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "model.pt").write_bytes(b"weights")
    (out / BAD_NAME).write_bytes(b"not utf-8")
    (out / "line\nbreak.txt").write_bytes(b"newline")
    (out / os.fsdecode(b"x\xfe")).write_bytes(b"escapes to a taken key")
    (out / "x%FE").write_bytes(b"the key's own file")
    result = copy_tree(str(out), f"s3://{bucket}/run", settings=S3Settings.from_env(s3_env))
    assert read_objects(s3, bucket, "run/") == {
        "model.pt": b"weights",
        "bad%FFname.bin": b"not utf-8",
        "line%0Abreak.txt": b"newline",
        "x%FE": b"the key's own file",
    }
    assert sorted(result.renamed) == [
        r"bad\xffname.bin: uploaded as bad%FFname.bin (its name is not UTF-8)",
        "line\nbreak.txt: uploaded as line%0Abreak.txt (its name holds a control character)",
    ]
    assert result.left_out == (r"x\xfe: its name is not UTF-8, and its escaped key x%FE is taken",)


@pytest.mark.slow  # runs long: a user and a policy in the server, enforced for the test
def test_an_object_the_store_refuses_is_named_and_the_others_arrive(
    s3_endpoint: str, s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    statements: list[dict[str, Any]] = [
        {
            "Effect": "Allow",
            "Action": "s3:*",
            "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"],
        },
        {
            "Effect": "Deny",
            "Action": "s3:PutObject",
            "Resource": f"arn:aws:s3:::{bucket}/run/locked/*",
        },
    ]
    with enforced_policy(s3_endpoint, s3_env, statements) as env:
        plan = plan_channels(["t.py", f"--train_url=s3://{bucket}/run"], env, tmp_path)
        logs: list[str] = []
        with JobChannels(plan, upload_interval=0, log=logs.append):
            out = Path(plan.channels[0].local_dir)  # what the ranks write
            (out / "locked").mkdir()
            (out / "model.pt").write_bytes(b"weights")
            (out / "locked" / "a.bin").write_bytes(b"refused")
    assert read_objects(s3, bucket, "run/") == {"model.pt": b"weights"}
    refused = [line for line in logs if "not uploaded: locked/a.bin:" in line]
    assert len(refused) == 1
    assert "access denied" in refused[0]
    assert any("train_url: uploaded 1 file" in line and "1 left out" in line for line in logs)


def test_keys_named_like_partial_files_both_arrive(
    s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    objects = {"in/x": b"the object", "in/x.ascendify-partial": b"another object, longer"}
    put_objects(s3, bucket, objects)
    settings = S3Settings.from_env(s3_env)
    staged = tmp_path / "staged"
    result = copy_tree(f"s3://{bucket}/in", str(staged), settings=settings)
    assert len(result.copied) == 2
    local = {p.name: p.read_bytes() for p in staged.iterdir()}
    assert local == {key[len("in/") :]: body for key, body in objects.items()}
    assert not partial_dir(staged).exists()
    copy_tree(str(staged), f"s3://{bucket}/back", settings=settings)
    assert read_objects(s3, bucket, "back/") == local


def test_the_default_timeouts_bound_a_silent_store_below_a_minute() -> None:
    settings = S3Settings.from_env({})
    # The first contact: s3fs adds no retries of its own to botocore's attempts...
    assert settings.filesystem(probe=True).retries == 1
    # ...while the transfers keep them, to resume a download whose body broke off.
    assert settings.filesystem().retries == TRANSFER_RETRIES > 1
    assert settings.read_timeout == DEFAULT_READ_TIMEOUT
    assert settings.max_attempts * settings.read_timeout + settings.connect_timeout < 60


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
def test_a_timeout_that_cannot_be_used_is_refused_by_name(value: str) -> None:
    with pytest.raises(Exception, match=f"ASCENDIFY_S3_READ_TIMEOUT must be .*{value!r}"):
        S3Settings.from_env({"ASCENDIFY_S3_READ_TIMEOUT": value})


@pytest.mark.slow  # waits for the read timeout
def test_staging_from_a_silent_store_fails_with_a_message(
    silent_endpoint: str, tmp_path: Path
) -> None:
    env = {"AWS_ENDPOINT_URL": silent_endpoint, **FAST_FAILURE}
    started = time.monotonic()
    with pytest.raises(EndpointUnreachableError, match="did not answer in time"):
        copy_tree("s3://bucket/in", str(tmp_path / "in"), settings=S3Settings.from_env(env))
    assert time.monotonic() - started < 30  # the 1 s read timeout, not botocore's 60 s and retries


@pytest.mark.slow
def test_run_against_a_silent_store_exits_2_and_starts_no_rank(
    run_cli: RunCli, silent_endpoint: str, tmp_path: Path
) -> None:
    marker = tmp_path / "rank-ran"
    script = tmp_path / "train.py"
    script.write_text(f"open({str(marker)!r}, 'w').close()\n")
    env = {"AWS_ENDPOINT_URL": silent_endpoint, **FAST_FAILURE}
    started = time.monotonic()
    result = run_cli(
        ["run", "--log-dir", str(tmp_path / "logs"), "python", str(script),
         "--data_url=s3://bucket/in/"],
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "did not answer in time" in result.stderr
    assert "ASCENDIFY_S3_READ_TIMEOUT" in result.stderr
    assert time.monotonic() - started < 50  # the 1 s read timeout, not botocore's 60 s
    assert not marker.exists()


@pytest.mark.slow
def test_sigterm_while_staging_leaves_no_partial_file(
    s3_endpoint: str, s3: Any, bucket: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    put_objects(s3, bucket, {"in/big.bin": b"x" * (4 << 20), "in/small.txt": b"s"})
    host, port = s3_endpoint.removeprefix("http://").split(":")
    proxy = SlowProxy((host, int(port)), rate=256 * 1024)  # the big object takes 16 s
    script = tmp_path / "train.py"
    script.write_text("open('rank-ran', 'w').close()\n")
    env = {**s3_env, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{proxy.port}"}
    launcher = subprocess.Popen(
        [sys.executable, "-m", "ascendify", "run", "--log-dir", str(tmp_path / "logs"),
         "python", str(script), f"--data_url=s3://{bucket}/in/"],
        cwd=tmp_path, env=ascendify_env(env), stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        partials = partial_dir(tmp_path / "inputs" / "data_url_0")
        deadline = time.monotonic() + HANG_BOUND
        while not (partials.is_dir() and any(p.stat().st_size for p in partials.iterdir())):
            assert launcher.poll() is None, "the launcher ended before its download began"
            assert time.monotonic() < deadline, "no download began"
            time.sleep(0.05)
        launcher.send_signal(signal.SIGTERM)
        _, stderr = launcher.communicate(timeout=HANG_BOUND)
    finally:
        proxy.close()
        if launcher.poll() is None:
            launcher.kill()
    assert launcher.returncode == 128 + signal.SIGTERM, stderr
    assert "stopped by SIGTERM while the inputs were staged" in stderr
    assert [p for p in tmp_path.rglob("*") if "ascendify-partial" in p.name] == []
    assert not (tmp_path / "rank-ran").exists()
    assert not psutil.pid_exists(launcher.pid)
