"""``ascendify run --emit``: manifests valid against the resources' schemas, runnable as emitted."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from ascendify.launch.manifests import KINDS
from tests.conftest import HANG_BOUND, RunCli
from tests.launch.k8s_schemas import problems

pytestmark = pytest.mark.slow  # every test here starts processes


def emit(run_cli: RunCli, kind: str, *extra: str) -> Any:
    result = run_cli(
        [
            "run",
            "--emit",
            kind,
            "--image",
            "registry.local/train:1",
            "--name",
            "resnet-8x2",
            *extra,
            "python",
            "train.py",
            "--lr=0.1",
        ],
        timeout=HANG_BOUND,
    )
    assert result.returncode == 0, result.stderr
    return yaml.safe_load(result.stdout)


def containers(manifest: Any) -> list[dict[str, Any]]:
    spec = manifest["spec"]
    if manifest["kind"] == "Job":
        templates = [task["template"] for task in spec["tasks"]]
    else:
        replicas = spec.get("pytorchReplicaSpecs") or spec["replicaSpecs"]
        templates = [replica["template"] for replica in replicas.values()]
    return [c for t in templates for c in t["spec"]["containers"]]


@pytest.mark.parametrize("kind", KINDS)
def test_manifest_is_valid_and_runs_the_same_command_everywhere(run_cli: RunCli, kind: str) -> None:
    manifest = emit(run_cli, kind, "--nnodes", "3", "--nproc-per-node", "8")
    assert problems(manifest) == []
    commands = {tuple(c["command"]) for c in containers(manifest)}
    assert commands == {
        (
            "ascendify",
            "run",
            "--nnodes",
            "3",
            "--nproc-per-node",
            "8",
            "python",
            "train.py",
            "--lr=0.1",
        )
    }
    assert all(
        c["resources"]["limits"] == {"huawei.com/Ascend910": 8} for c in containers(manifest)
    )


def test_volcano_pod_environment_resolves_to_the_right_node(run_cli: RunCli) -> None:
    """Run the emitted command (as a dry run) with the variables Volcano's plugins give pod 1."""
    manifest = emit(run_cli, "volcano", "--nnodes", "2", "--nproc-per-node", "2")
    [container] = containers(manifest)
    pod_env = {e["name"]: e["value"] for e in container["env"]}
    pod_env.update(
        {
            "VC_TASK_INDEX": "1",
            "VK_TASK_INDEX": "1",
            "VC_WORKER_NUM": "2",
            "VC_WORKER_HOSTS": "resnet-8x2-worker-0.resnet-8x2,resnet-8x2-worker-1.resnet-8x2",
        }
    )
    command = container["command"]
    result = run_cli([command[1], "--dry-run", *command[2:]], env=pod_env, timeout=HANG_BOUND)
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    assert plan["platform"]["name"] == "modelarts"
    assert (plan["node_rank"], plan["nnodes"]) == (1, 2)
    assert plan["master_addr"] == "resnet-8x2-worker-0.resnet-8x2"
    assert plan["master_port"] == 29500
    assert [w["rank"] for w in plan["workers"]] == [2, 3]


def test_pytorchjob_pod_environment_resolves_to_the_right_node(run_cli: RunCli) -> None:
    manifest = emit(run_cli, "pytorchjob", "--nnodes", "2", "--nproc-per-node", "2")
    command = containers(manifest)[1]["command"]  # the Worker
    operator_env = {
        "MASTER_ADDR": "resnet-8x2-master-0",
        "MASTER_PORT": "23456",
        "RANK": "1",
        "WORLD_SIZE": "2",
        "PYTHONUNBUFFERED": "0",
    }
    result = run_cli([command[1], "--dry-run", *command[2:]], env=operator_env, timeout=HANG_BOUND)
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    assert plan["platform"]["name"] == "pytorchjob"
    assert (plan["node_rank"], plan["master_addr"], plan["master_port"]) == (
        1,
        "resnet-8x2-master-0",
        23456,
    )


def test_ascendjob_pod_environment_resolves_to_the_right_node(run_cli: RunCli) -> None:
    """The Worker pod's command, run (as a dry run) with what ascend-operator gives its container."""
    manifest = emit(run_cli, "ascendjob", "--nnodes", "2", "--nproc-per-node", "2")
    worker = manifest["spec"]["replicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    assert worker["name"] == "ascend"  # the only container the operator sets variables in
    operator_env = {
        "MASTER_ADDR": "10.96.0.17",  # the Master's service
        "MASTER_PORT": str(worker["ports"][0]["containerPort"]),
        "RANK": "1",  # pod rank: the Master is 0, Worker i is i + 1
        "WORLD_SIZE": "4",  # cards x pods
        "LOCAL_WORLD_SIZE": "2",
        "LOCAL_RANK": "0,1",  # the pod's card indices, not one rank's
        "MINDX_TASK_ID": "2f6c0b1e-uid",
        "MINDX_SERVER_IP": "10.96.0.2",
        "HostNetwork": "false",
    }
    command = worker["command"]
    result = run_cli([command[1], "--dry-run", *command[2:]], env=operator_env, timeout=HANG_BOUND)
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    assert (plan["platform"]["name"], plan["job_id"]) == ("pytorchjob", "2f6c0b1e-uid")
    assert (plan["node_rank"], plan["nnodes"], plan["world_size"]) == (1, 2, 4)
    assert (plan["master_addr"], plan["master_port"]) == ("10.96.0.17", 2222)
    ranks = [
        (w["env"]["RANK"], w["env"]["LOCAL_RANK"], w["env"]["WORLD_SIZE"]) for w in plan["workers"]
    ]
    assert ranks == [("2", "0", "4"), ("3", "1", "4")]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--emit", "volcano", "--nproc-per-node", "auto"], "needs a number"),
        (["--emit", "volcano", "--image", "i", "--name", "Bad_Name"], "not a Kubernetes name"),
        (["--emit", "pytorchjob"], "needs --image"),
        (["--emit", "ascendjob"], "needs --image"),
    ],
)
def test_bad_manifest_requests_are_named(run_cli: RunCli, extra: list[str], message: str) -> None:
    args = ["run", *extra, "python", "t.py"]
    if "--image" not in extra and "needs --image" not in message:
        args[1:1] = ["--image", "i"]
    result = run_cli(args, timeout=HANG_BOUND)
    assert result.returncode == 2
    assert message in result.stderr
