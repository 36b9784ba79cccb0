"""``ascendify run --emit``: manifests valid against the resources' schemas, runnable as emitted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from referencing import Registry, Resource

from tests.conftest import HANG_BOUND, RunCli

pytestmark = pytest.mark.slow  # every test here starts processes

SCHEMAS = Path(__file__).parent / "schemas"


def validator(name: str) -> jsonschema.Draft202012Validator:
    resources = [
        (path.name, Resource.from_contents(json.loads(path.read_text())))
        for path in SCHEMAS.glob("*.schema.json")
    ]
    schema = json.loads((SCHEMAS / name).read_text())
    return jsonschema.Draft202012Validator(schema, registry=Registry().with_resources(resources))


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
    if manifest["kind"] == "Job":
        templates = [task["template"] for task in manifest["spec"]["tasks"]]
    else:
        templates = [r["template"] for r in manifest["spec"]["pytorchReplicaSpecs"].values()]
    return [c for t in templates for c in t["spec"]["containers"]]


@pytest.mark.parametrize(
    ("kind", "schema"),
    [("volcano", "volcano-job.schema.json"), ("pytorchjob", "pytorchjob.schema.json")],
)
def test_manifest_is_valid_and_runs_the_same_command_everywhere(
    run_cli: RunCli, kind: str, schema: str
) -> None:
    manifest = emit(run_cli, kind, "--nnodes", "3", "--nproc-per-node", "8")
    validator(schema).validate(manifest)
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


def test_schemas_reject_what_the_cluster_would_reject(run_cli: RunCli) -> None:
    manifest = emit(run_cli, "pytorchjob", "--nnodes", "2", "--nproc-per-node", "1")
    manifest["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0][
        "name"
    ] = "Train"
    with pytest.raises(jsonschema.ValidationError):
        validator("pytorchjob.schema.json").validate(manifest)


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


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--emit", "volcano", "--nproc-per-node", "auto"], "needs a number"),
        (["--emit", "volcano", "--image", "i", "--name", "Bad_Name"], "not a Kubernetes name"),
        (["--emit", "pytorchjob"], "needs --image"),
    ],
)
def test_bad_manifest_requests_are_named(run_cli: RunCli, extra: list[str], message: str) -> None:
    args = ["run", *extra, "python", "t.py"]
    if "--image" not in extra and "needs --image" not in message:
        args[1:1] = ["--image", "i"]
    result = run_cli(args, timeout=HANG_BOUND)
    assert result.returncode == 2
    assert message in result.stderr
