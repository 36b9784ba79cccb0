"""``ascendify run`` with object-storage channels: a real 2-rank job against the S3 server."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import HANG_BOUND, RunCli, ascendify_env
from tests.storage.conftest import SECRET_ACCESS_KEY, put_objects, read_objects

pytestmark = pytest.mark.slow  # every test here starts processes

RANK_SCRIPT = """\
import argparse, os, pathlib, sys
parser = argparse.ArgumentParser()
parser.add_argument("--data_url")
parser.add_argument("--train_url")
parser.add_argument("--fail-rank", type=int, default=-1)
args = parser.parse_args()
rank = int(os.environ["RANK"])
total = sum(int(p.read_text()) for p in sorted(pathlib.Path(args.data_url).rglob("*.txt")))
out = pathlib.Path(args.train_url)
out.mkdir(parents=True, exist_ok=True)
(out / f"rank{rank}.json").write_text(f'{{"rank": {rank}, "total": {total}, "data": "{args.data_url}"}}')
sys.exit(5 if rank == args.fail_rank else 0)
"""


def _job(tmp_path: Path, bucket: str, *extra: str) -> list[str]:
    script = tmp_path / "rank_job.py"
    script.write_text(RANK_SCRIPT, encoding="utf-8")
    return [
        "run", "--nproc-per-node", "2", "--log-dir", str(tmp_path / "logs"),
        "python", str(script),
        f"--data_url=s3://{bucket}/in/", "--train_url", f"obs://{bucket}/out/", *extra,
    ]  # fmt: skip


def test_inputs_are_staged_and_outputs_uploaded(
    run_cli: RunCli, tmp_path: Path, s3: Any, bucket: str, s3_env: dict[str, str]
) -> None:
    put_objects(s3, bucket, {"in/a.txt": b"2", "in/sub/b.txt": b"40"})
    result = run_cli(_job(tmp_path, bucket), cwd=tmp_path, env=s3_env)
    assert result.returncode == 0, result.stderr
    uploaded = read_objects(s3, bucket, "out/")
    assert sorted(uploaded) == ["rank0.json", "rank1.json"]
    for rank in (0, 1):
        record = json.loads(uploaded[f"rank{rank}.json"])
        assert record["total"] == 42
        # Every rank read the node's staged copy, not the URL.
        assert Path(record["data"]).resolve() == (tmp_path / "inputs" / "data_url_0").resolve()
    assert SECRET_ACCESS_KEY not in result.stdout + result.stderr


def test_outputs_are_uploaded_when_a_rank_fails(
    run_cli: RunCli, tmp_path: Path, s3: Any, bucket: str, s3_env: dict[str, str]
) -> None:
    put_objects(s3, bucket, {"in/a.txt": b"1"})
    result = run_cli(_job(tmp_path, bucket, "--fail-rank", "1"), cwd=tmp_path, env=s3_env)
    assert result.returncode == 5
    assert "rank 1" in result.stderr
    assert "rank1.json" in read_objects(s3, bucket, "out/")


def test_a_missing_bucket_stops_the_job_before_any_rank_starts(
    run_cli: RunCli, tmp_path: Path, s3_env: dict[str, str]
) -> None:
    result = run_cli(_job(tmp_path, "no-such-bucket-ascendify"), cwd=tmp_path, env=s3_env)
    assert result.returncode == 2
    assert "ascendify run: error:" in result.stderr
    assert "no-such-bucket-ascendify" in result.stderr
    assert not (tmp_path / "logs").exists() or not any((tmp_path / "logs").rglob("*.log"))


def test_dry_run_shows_the_rewritten_arguments_and_touches_nothing(
    run_cli: RunCli, tmp_path: Path, s3_env: dict[str, str]
) -> None:
    command = _job(tmp_path, "any-bucket")
    result = run_cli([command[0], "--dry-run", *command[1:]], cwd=tmp_path, env=s3_env)
    assert result.returncode == 0, result.stderr
    argv = json.loads(result.stdout)["workers"][0]["argv"]
    assert f"--data_url={tmp_path / 'inputs' / 'data_url_0'}/" in argv
    assert argv[argv.index("--train_url") + 1] == f"{tmp_path / 'outputs' / 'train_url_0'}/"
    assert not (tmp_path / "inputs").exists()


WRITE_THEN_WAIT = """\
import argparse, os, pathlib, time
parser = argparse.ArgumentParser()
parser.add_argument("--train_url")
args = parser.parse_args()
out = pathlib.Path(args.train_url)
out.mkdir(parents=True, exist_ok=True)
(out / f"rank{os.environ['RANK']}.txt").write_text("written before the stop")
time.sleep(600)
"""


def test_repeated_stop_signals_do_not_cut_the_final_upload_short(
    tmp_path: Path, s3: Any, bucket: str, s3_env: dict[str, str]
) -> None:
    # A platform may signal more than once, and on a multi-node job a node stopped by a peer's
    # failure gets its own stop signal moments later: the ranks' outputs must still be uploaded.
    script = tmp_path / "write_then_wait.py"
    script.write_text(WRITE_THEN_WAIT, encoding="utf-8")
    launcher = subprocess.Popen(
        [sys.executable, "-m", "ascendify", "run", "--nproc-per-node", "2",
         "--log-dir", str(tmp_path / "logs"), "python", str(script),
         "--train_url", f"s3://{bucket}/out/"],
        cwd=tmp_path, env=ascendify_env(s3_env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        staged = tmp_path / "outputs" / "train_url_0"
        deadline = time.monotonic() + HANG_BOUND
        while len(list(staged.glob("rank*.txt"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        while launcher.poll() is None and time.monotonic() < deadline:
            launcher.send_signal(signal.SIGTERM)
            time.sleep(0.05)
        _out, err = launcher.communicate(timeout=HANG_BOUND)
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.communicate()
    # Its work done, the launcher may end by the next signal rather than by its own exit code.
    assert launcher.returncode in (128 + signal.SIGTERM, -signal.SIGTERM), err
    assert "stopped by SIGTERM" in err
    expected = {f"rank{rank}.txt": b"written before the stop" for rank in (0, 1)}
    assert read_objects(s3, bucket, "out/") == expected
