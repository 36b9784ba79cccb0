"""``ascendify run`` with object-storage channels: a real 2-rank job against the S3 server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunCli
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
