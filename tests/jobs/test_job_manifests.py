"""``job submit --dry-run`` for a Kubernetes engine keeps what the local engine keeps.

The example of a new user: restarts, a hang timeout, the job's env and ModelArts' variables were
all lost on the way to a Volcano Job (maxRetry 0, a bare ``ascendify run``). In-process: the
manifest is printed, nothing starts.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from ascendify.cli import main
from ascendify.commands import run as run_command
from ascendify.launch import LaunchOptions, resolve_spec
from ascendify.launch.options import from_args
from tests.launch.k8s_schemas import problems

ISSUE_EXAMPLE = [
    "job",
    "submit",
    "--engine",
    "volcano",
    "--image",
    "IMG",
    "--nodes",
    "2",
    "--cards",
    "2",
    "--max-restarts",
    "3",
    "--hang-timeout",
    "120",
    "--env",
    "FOO=1",
    "--boot-file",
    "train.py",
    "--dry-run",
]


def dry_run(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> Any:
    (tmp_path / "train.py").write_text("print('step')\n")
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 0
    return yaml.safe_load(capsys.readouterr().out)


def flag_value(command: list[str], flag: str) -> str:
    assert flag in command, command
    return command[command.index(flag) + 1]


def test_the_issue_example_keeps_restarts_hang_timeout_env_and_modelarts_variables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = dry_run(ISSUE_EXAMPLE, tmp_path, capsys, monkeypatch)
    assert problems(manifest) == []
    assert manifest["spec"]["maxRetry"] == 3
    [task] = manifest["spec"]["tasks"]
    [container] = task["template"]["spec"]["containers"]
    command = container["command"]
    assert command[:2] == ["ascendify", "run"]
    assert float(flag_value(command, "--hang-timeout")) == 120
    assert flag_value(command, "--max-restarts") == "3"
    assert command[-2:] == ["python", "train.py"]
    env = {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}
    assert env["FOO"] == "1"
    assert (env["MA_NUM_HOSTS"], env["MA_NUM_GPUS"], env["MA_TASK_NAME"]) == ("2", "2", "worker")
    assert env["MA_VJ_NAME"] == "ma-job-train"
    assert env["MA_CURRENT_IP"] == {"fieldRef": {"fieldPath": "status.podIP"}}


@pytest.mark.parametrize("engine", ["pytorchjob", "ascendjob"])
def test_operator_manifests_restart_lost_pods_as_often_as_max_restarts(
    engine: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    argv = [*ISSUE_EXAMPLE[:3], engine, *ISSUE_EXAMPLE[4:]]
    manifest = dry_run(argv, tmp_path, capsys, monkeypatch)
    assert problems(manifest) == []
    spec = manifest["spec"]
    assert spec["runPolicy"]["backoffLimit"] == 3
    for replica in (spec.get("pytorchReplicaSpecs") or spec["replicaSpecs"]).values():
        assert replica["restartPolicy"] == "ExitCode"
        [container] = replica["template"]["spec"]["containers"]
        assert flag_value(container["command"], "--max-restarts") == "3"
        assert {"name": "FOO", "value": "1"} in container["env"]


def test_a_pytorchjob_pod_with_modelarts_variables_is_placed_by_the_operator() -> None:
    """The job's ModelArts variables name no node; the operator's RANK does."""
    pod = {
        "PATH": os.environ["PATH"],
        "MA_NUM_HOSTS": "3",
        "MA_NUM_GPUS": "1",
        "MA_VJ_NAME": "ma-job-train",
        "MASTER_ADDR": "train-master-0",
        "MASTER_PORT": "23456",
        "RANK": "2",
        "WORLD_SIZE": "3",
    }
    spec = resolve_spec(LaunchOptions(command=("python", "train.py")), pod)
    assert (spec.platform, spec.node_rank, spec.nnodes) == ("pytorchjob", 2, 3)
    assert spec.master_addr == "train-master-0"


def test_a_pre_start_script_a_pod_would_not_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "train.py").write_text("")
    (tmp_path / "ma-pre-start.sh").write_text("pip install flash-attn\n")
    monkeypatch.chdir(tmp_path)
    assert main(["job", "validate", *ISSUE_EXAMPLE[2:-1]]) == 2
    err = capsys.readouterr().err
    assert "code_dir: engine volcano cannot honour its ma-pre-start.sh" in err
    assert main(["job", "validate", "--engine", "local", "--boot-file", "train.py"]) == 0


@pytest.mark.parametrize("engine", ["volcano", "pytorchjob", "ascendjob"])
def test_a_job_pod_places_itself_with_the_modelarts_variables_set(
    engine: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    """Node 1's pod: its command, resolved (in-process) with its env and what the platform adds."""
    argv = [*ISSUE_EXAMPLE[:3], engine, *ISSUE_EXAMPLE[4:]]
    manifest = dry_run(argv, tmp_path, capsys, monkeypatch)
    spec = manifest["spec"]
    groups = spec.get("tasks") or list(
        (spec.get("pytorchReplicaSpecs") or spec["replicaSpecs"]).values()
    )
    [container] = groups[-1]["template"]["spec"]["containers"]
    pod = {e["name"]: e["value"] for e in container["env"] if "value" in e}
    pod.update(PATH=os.environ["PATH"], MA_CURRENT_IP="10.0.0.2", MA_CURRENT_INSTANCE_NAME="p1")
    if engine == "volcano":  # the env and svc plugins
        pod.update(VC_TASK_INDEX="1", VC_WORKER_HOSTS="train-worker-0.train,train-worker-1.train")
    else:  # the operator
        pod.update(MASTER_ADDR="train-master-0", MASTER_PORT="23456", RANK="1", WORLD_SIZE="4")
        pod.update(LOCAL_WORLD_SIZE="2")
    parser = argparse.ArgumentParser()
    run_command.add_arguments(parser)
    options = from_args(parser.parse_args(container["command"][2:]))
    placed = resolve_spec(options, pod)
    assert (placed.node_rank, placed.nnodes, placed.nproc_per_node) == (1, 2, 2)
    assert placed.master_addr == (
        "train-worker-0.train" if engine == "volcano" else "train-master-0"
    )
    assert (placed.max_restarts, placed.hang_timeout) == (3, 120.0)
