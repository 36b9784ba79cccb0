"""Every manifest ascendify writes validates as the cluster would check it; broken ones do not."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest

from ascendify.jobs.manifest import manifest as job_manifest
from ascendify.jobs.spec import MANIFEST_ENGINES, resolve
from ascendify.launch import LaunchOptions, resolve_spec
from ascendify.launch.manifests import ASCENDJOB_PORT, KINDS, JobManifest, render
from tests.launch.k8s_schemas import problems

TOPOLOGIES = [(1, 1), (1, 8), (2, 8), (5, 16)]  # (pods, cards per pod)


def job(nnodes: int = 2, nproc: int = 8, accelerator: str = "huawei.com/Ascend910") -> JobManifest:
    command = ("accelerate", "launch", "train.py", "--lr", "0.1")
    options = LaunchOptions(command=command, nnodes=nnodes, nproc_per_node=str(nproc))
    return JobManifest("llama-sft", "registry.local/train:1", options, accelerator)


def pod_specs(manifest: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """(replicas, pod spec) of each task or replica type."""
    spec = manifest["spec"]
    groups = spec.get("tasks") or list(
        (spec.get("pytorchReplicaSpecs") or spec["replicaSpecs"]).values()
    )
    return [(group["replicas"], group["template"]["spec"]) for group in groups]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("nnodes", "nproc"), TOPOLOGIES)
def test_every_kind_and_topology_validates(kind: str, nnodes: int, nproc: int) -> None:
    manifest = render(kind, job(nnodes, nproc))
    assert problems(manifest) == []
    groups = pod_specs(manifest)
    assert sum(replicas for replicas, _ in groups) == nnodes
    for _, pod in groups:
        [container] = pod["containers"]
        assert container["resources"]["limits"] == {"huawei.com/Ascend910": nproc}
        assert container["command"][:6] == [
            "ascendify", "run", "--nnodes", str(nnodes), "--nproc-per-node", str(nproc)
        ]  # fmt: skip


@pytest.mark.parametrize("engine", MANIFEST_ENGINES)
def test_job_dry_run_manifests_validate(engine: str, tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("print('hi')\n")
    spec = resolve(
        {
            "code_dir": str(tmp_path),
            "boot_command": "accelerate launch train.py --epochs 1",
            "engine": engine,
            "image": "registry.local/train:1",
            "nodes": 3,
            "flavor": "Ascend: 8",
            "name": "sft",
        }
    )
    manifest = job_manifest(spec)
    assert problems(manifest) == []
    assert sum(replicas for replicas, _ in pod_specs(manifest)) == 3


def test_ascendjob_has_mindclusters_documented_pytorch_shape() -> None:
    manifest = render("ascendjob", job(3, 8, accelerator="huawei.com/Ascend910"))
    assert (manifest["apiVersion"], manifest["kind"]) == ("mindxdl.gitee.com/v1", "AscendJob")
    assert manifest["metadata"]["labels"] == {
        "framework": "pytorch",
        "ring-controller.atlas": "ascend-910b",
    }
    spec = manifest["spec"]
    assert spec["schedulerName"] == "volcano"
    assert spec["runPolicy"]["schedulingPolicy"]["minAvailable"] == 3  # all pods or none
    replicas = spec["replicaSpecs"]
    assert (replicas["Master"]["replicas"], replicas["Worker"]["replicas"]) == (1, 2)
    for replica in replicas.values():
        template = replica["template"]
        assert template["metadata"]["labels"] == {"ring-controller.atlas": "ascend-910b"}
        [container] = template["spec"]["containers"]
        assert container["name"] == "ascend"
        assert container["ports"] == [{"name": "ascendjob-port", "containerPort": ASCENDJOB_PORT}]
        assert container["env"] == [
            {
                "name": "ASCEND_VISIBLE_DEVICES",
                "valueFrom": {
                    "fieldRef": {"fieldPath": "metadata.annotations['huawei.com/Ascend910']"}
                },
            }
        ]
    one_pod = render("ascendjob", job(1, 8))["spec"]["replicaSpecs"]
    assert list(one_pod) == ["Master"]  # a one-pod job has no Worker


def test_ascendjob_pod_topology_comes_from_the_operators_variables() -> None:
    """Without any flag, Worker 1 of an 8-card, 3-pod AscendJob (pod rank 2) places its ranks."""
    operator_env = {
        "PATH": os.environ["PATH"],
        "MASTER_ADDR": "10.96.0.17",
        "MASTER_PORT": "2222",
        "RANK": "2",
        "WORLD_SIZE": "24",
        "LOCAL_WORLD_SIZE": "8",
        "LOCAL_RANK": "0,1,2,3,4,5,6,7",  # the pod's cards: not a rank, and not read as one
        "MINDX_TASK_ID": "2f6c0b1e-uid",
    }
    spec = resolve_spec(LaunchOptions(command=("python", "train.py")), operator_env)
    assert spec.platform == "pytorchjob"
    assert (spec.nnodes, spec.node_rank, spec.nproc_per_node) == (3, 2, 8)
    assert (spec.master_addr, spec.master_port, spec.job_id) == ("10.96.0.17", 2222, "2f6c0b1e-uid")


def broken(change: str) -> dict[str, Any]:
    manifest = copy.deepcopy(render("ascendjob", job(2, 8)))
    master = manifest["spec"]["replicaSpecs"]["Master"]
    container = master["template"]["spec"]["containers"][0]
    if change == "wrong type":
        master["replicas"] = "1"
    elif change == "missing required":
        del container["name"]
    elif change == "unknown field":
        container["comand"] = container.pop("command")
    elif change == "wrong port type":
        container["ports"][0]["containerPort"] = "2222"
    elif change == "wrong kind":
        manifest["apiVersion"] = "mindxdl.gitee.com/v2"
    return manifest


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("wrong type", "AscendJob spec.replicaSpecs.Master.replicas: '1' is not of type 'integer'"),
        (
            "missing required",
            "AscendJob spec.replicaSpecs.Master.template.spec.containers.0: "
            "'name' is a required property",
        ),
        ("unknown field", "('comand' was unexpected)"),
        (
            "wrong port type",
            "AscendJob spec.replicaSpecs.Master.template.spec.containers.0.ports.0.containerPort: "
            "'2222' is not of type 'integer'",
        ),
        ("wrong kind", "AscendJob: no schema for apiVersion 'mindxdl.gitee.com/v2'"),
    ],
)
def test_broken_manifests_fail_with_the_field_named(change: str, message: str) -> None:
    found = problems(broken(change))
    assert any(message in problem for problem in found), found


@pytest.mark.parametrize("kind", KINDS)
def test_a_pod_template_field_of_the_wrong_type_fails_for_every_kind(kind: str) -> None:
    manifest = render(kind, job(2, 8))
    for _, pod in pod_specs(manifest):
        pod["containers"][0]["command"] = "ascendify run python train.py"  # a string, not a list
    found = problems(manifest)
    assert found
    assert all("command" in problem and "is not of type 'array'" in problem for problem in found)
