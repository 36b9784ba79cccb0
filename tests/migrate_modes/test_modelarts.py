"""``-m/--modelarts``: the generated path manager, run for real against file:// and an S3 server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from ascendify.cli import main
from tests.conftest import HANG_BOUND

SCRIPT = """\
import json
import os

with open("data/train.txt") as stream:
    words = stream.read().split()
os.makedirs("output/metrics", exist_ok=True)
with open("output/metrics/result.json", "w") as stream:
    json.dump({"words": len(words)}, stream)
"""


@pytest.fixture
def result(tmp_path: Path) -> Path:
    # Migrated in process: the fast test reads the result, only the slow ones run it.
    source = tmp_path / "job"
    source.mkdir()
    (source / "train.py").write_text(SCRIPT)
    assert main(["migrate", "-i", str(source), "-o", str(tmp_path / "out"), "-m", "-j", "1"]) == 0
    return tmp_path / "out" / "job_msft"


def run_job(result: Path, mapping: dict[str, object] | None) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if mapping is not None:
        env["PATH_MAPPING_CONFIG"] = json.dumps(mapping)
    return subprocess.run(
        [sys.executable, "train.py"], cwd=result, env=env,
        capture_output=True, text=True, timeout=HANG_BOUND, check=False,
    )  # fmt: skip


def test_paths_are_wrapped_and_the_package_is_shipped(result: Path) -> None:
    text = (result / "train.py").read_text()
    assert "from ascend_modelarts_function import ModelArtsPathManager" in text
    assert text.count("ModelArtsPathManager().get_path(") == 3
    package = result / "ascend_modelarts_function"
    assert sorted(p.name for p in package.iterdir()) == [
        "__init__.py", "modelarts_path_manager.py", "path_mapping_config.py",
    ]  # fmt: skip
    assert "ascendify" not in (package / "modelarts_path_manager.py").read_text()


@pytest.mark.slow
def test_without_a_mapping_nothing_moves(result: Path) -> None:
    (result / "data").mkdir()
    (result / "data" / "train.txt").write_text("a b c\n")
    done = run_job(result, None)
    assert done.returncode == 0, done.stderr
    assert json.loads((result / "output/metrics/result.json").read_text()) == {"words": 3}


@pytest.mark.slow
def test_file_mapping_downloads_inputs_and_uploads_outputs(result: Path, tmp_path: Path) -> None:
    remote = tmp_path / "remote"
    (remote / "dataset").mkdir(parents=True)
    (remote / "dataset" / "train.txt").write_text("one two three four\n")
    mapping = {
        "input": {"data": (remote / "dataset").as_uri()},
        "output": {"output": (remote / "run-1").as_uri()},
    }
    done = run_job(result, mapping)
    assert done.returncode == 0, done.stderr
    assert (result / "data" / "train.txt").read_text() == "one two three four\n"
    uploaded = remote / "run-1" / "metrics" / "result.json"
    assert json.loads(uploaded.read_text()) == {"words": 4}


@pytest.mark.slow
def test_a_missing_mapped_input_is_named(result: Path, tmp_path: Path) -> None:
    missing = (tmp_path / "nowhere").as_uri()
    done = run_job(result, {"input": {"data": missing}, "output": {}})
    assert done.returncode != 0
    assert "nowhere" in done.stderr


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.mark.slow
def test_s3_mapping_against_a_real_s3_protocol_server(result: Path, s3_endpoint: str) -> None:
    import boto3

    credentials = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
    s3 = boto3.client("s3", endpoint_url=s3_endpoint, region_name="us-east-1", **credentials)
    bucket = f"job-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="dataset/train.txt", Body=b"x y\n")
    options = {
        "s3": {
            "key": "testing",
            "secret": "testing",
            "client_kwargs": {"endpoint_url": s3_endpoint, "region_name": "us-east-1"},
        }
    }
    mapping = {
        "input": {"data": f"s3://{bucket}/dataset"},
        "output": {"output": f"obs://{bucket}/run-1"},  # OBS locations go through the S3 protocol
        "storage_options": options,
    }
    done = run_job(result, mapping)
    assert done.returncode == 0, done.stderr
    body = s3.get_object(Bucket=bucket, Key="run-1/metrics/result.json")["Body"].read()
    assert json.loads(body) == {"words": 2}
