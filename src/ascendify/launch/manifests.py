"""Kubernetes manifests whose pods all run the same ``ascendify run`` command.

``volcano``: a Volcano Job with the env and svc plugins (they give each pod VC_TASK_INDEX and
VC_WORKER_HOSTS, which the launcher reads as it does on ModelArts). ``pytorchjob``: a Kubeflow
PyTorchJob (the operator gives MASTER_ADDR, MASTER_PORT and RANK = pod index). ``ascendjob``:
MindCluster's AscendJob for PyTorch (ascend-operator gives the ``ascend`` container MASTER_ADDR and
MASTER_PORT of the Master's service, RANK = pod index with the Master 0, WORLD_SIZE = cards x pods,
LOCAL_WORLD_SIZE = cards and MINDX_TASK_ID). Pure: returns data.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ascendify.errors import AscendifyError

KINDS = ("volcano", "pytorchjob", "ascendjob")
# The port the Kubeflow operator publishes as MASTER_PORT; our rendezvous listens on it.
PYTORCHJOB_PORT = 23456
# ascend-operator's port: the container port named ascendjob-port (2222 when none is named)
# becomes the Master service's port and every pod's MASTER_PORT.
ASCENDJOB_PORT = 2222
# The chip family MindCluster's scheduler places the pods on (ascend-910 for the first 910).
ASCENDJOB_CHIP_LABEL = "ascend-910b"
DEFAULT_ACCELERATOR = "huawei.com/Ascend910"


@dataclass(frozen=True)
class JobManifest:
    name: str
    image: str
    nnodes: int
    nproc_per_node: int
    command: tuple[str, ...]
    accelerator: str = DEFAULT_ACCELERATOR


def render(kind: str, job: JobManifest) -> dict[str, Any]:
    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", job.name):
        raise AscendifyError(f"job name {job.name!r} is not a Kubernetes name (a-z, 0-9, '-')")
    if job.nnodes < 1 or job.nproc_per_node < 1:
        raise AscendifyError("a manifest needs --nnodes and --nproc-per-node of at least 1")
    if kind == "volcano":
        return _volcano(job)
    if kind == "pytorchjob":
        return _pytorchjob(job)
    if kind == "ascendjob":
        return _ascendjob(job)
    raise AscendifyError(f"unknown manifest kind {kind!r}; choose from {', '.join(KINDS)}")


def _launcher_command(job: JobManifest) -> list[str]:
    return [
        "ascendify", "run", "--nnodes", str(job.nnodes),
        "--nproc-per-node", str(job.nproc_per_node), *job.command,
    ]  # fmt: skip


def _container(job: JobManifest, name: str, port: int, port_name: str) -> dict[str, Any]:
    cards = {job.accelerator: job.nproc_per_node}
    return {
        "name": name,
        "image": job.image,
        "command": _launcher_command(job),
        "ports": [{"name": port_name, "containerPort": port}],
        "env": [{"name": "MASTER_PORT", "value": str(port)}],
        "resources": {"requests": dict(cards), "limits": dict(cards)},
    }


def _volcano(job: JobManifest) -> dict[str, Any]:
    from ascendify.launch.topology import DEFAULT_MASTER_PORT

    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": job.name},
        "spec": {
            "schedulerName": "volcano",
            "minAvailable": job.nnodes,  # gang scheduling: all nodes or none
            "plugins": {"env": [], "svc": []},
            "maxRetry": 0,
            "tasks": [
                {
                    "name": "worker",  # VC_WORKER_HOSTS / VC_WORKER_NUM, as on ModelArts
                    "replicas": job.nnodes,
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [
                                _container(job, "train", DEFAULT_MASTER_PORT, "rendezvous")
                            ],
                        }
                    },
                }
            ],
        },
    }


def _pytorchjob(job: JobManifest) -> dict[str, Any]:
    def replica(count: int) -> dict[str, Any]:
        container = _container(job, "pytorch", PYTORCHJOB_PORT, "pytorchjob-port")
        del container["env"]  # the operator sets MASTER_PORT itself
        return {
            "replicas": count,
            "restartPolicy": "Never",
            "template": {"spec": {"containers": [container]}},
        }

    replicas = _master_and_workers(job, replica)
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": job.name},
        "spec": {"pytorchReplicaSpecs": replicas},
    }


def _master_and_workers(
    job: JobManifest, replica: Callable[[int], dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """One Master pod and ``nnodes - 1`` Workers, as the Kubeflow and MindCluster operators
    number them (the Master is rank 0's node)."""
    replicas = {"Master": replica(1)}
    if job.nnodes > 1:
        replicas["Worker"] = replica(job.nnodes - 1)
    return replicas


def _ascendjob(job: JobManifest) -> dict[str, Any]:
    """MindCluster's documented multi-node PyTorch AscendJob: one Master pod, nnodes - 1 Workers."""
    chip = {"ring-controller.atlas": ASCENDJOB_CHIP_LABEL}

    def replica(count: int) -> dict[str, Any]:
        container = _container(job, "ascend", ASCENDJOB_PORT, "ascendjob-port")
        # The operator sets MASTER_PORT; ascend-docker-runtime mounts the cards Volcano chose,
        # which it reads from this variable (the pod's annotation named after the resource).
        annotation = f"metadata.annotations['{job.accelerator}']"
        container["env"] = [
            {"name": "ASCEND_VISIBLE_DEVICES", "valueFrom": {"fieldRef": {"fieldPath": annotation}}}
        ]
        return {
            "replicas": count,
            "restartPolicy": "Never",
            "template": {"metadata": {"labels": dict(chip)}, "spec": {"containers": [container]}},
        }

    replicas = _master_and_workers(job, replica)
    return {
        "apiVersion": "mindxdl.gitee.com/v1",
        "kind": "AscendJob",
        "metadata": {"name": job.name, "labels": {"framework": "pytorch", **chip}},
        "spec": {
            "schedulerName": "volcano",
            "runPolicy": {"schedulingPolicy": {"minAvailable": job.nnodes, "queue": "default"}},
            "successPolicy": "AllWorkers",
            "replicaSpecs": replicas,
        },
    }
