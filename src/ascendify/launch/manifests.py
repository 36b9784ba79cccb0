"""Kubernetes manifests whose pods all run the same ``ascendify run`` command.

``volcano``: a Volcano Job with the env and svc plugins (they give each pod VC_TASK_INDEX and
VC_WORKER_HOSTS, which the launcher reads as it does on ModelArts). ``pytorchjob``: a Kubeflow
PyTorchJob (the operator gives MASTER_ADDR, MASTER_PORT and RANK = pod index). Pure: returns data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ascendify.errors import AscendifyError

KINDS = ("volcano", "pytorchjob")
# The port the Kubeflow operator publishes as MASTER_PORT; our rendezvous listens on it.
PYTORCHJOB_PORT = 23456
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

    replicas = {"Master": replica(1)}
    if job.nnodes > 1:
        replicas["Worker"] = replica(job.nnodes - 1)
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": job.name},
        "spec": {"pytorchReplicaSpecs": replicas},
    }
