"""Kubernetes manifests whose pods all run the same ``ascendify run`` command.

``volcano``: a Volcano Job with the env and svc plugins (they give each pod VC_TASK_INDEX and
VC_WORKER_HOSTS, which the launcher reads as it does on ModelArts). ``pytorchjob``: a Kubeflow
PyTorchJob (the operator gives MASTER_ADDR, MASTER_PORT and RANK = pod index). ``ascendjob``:
MindCluster's AscendJob for PyTorch (ascend-operator gives the ``ascend`` container MASTER_ADDR and
MASTER_PORT of the Master's service, RANK = pod index with the Master 0, WORLD_SIZE = cards x pods,
LOCAL_WORLD_SIZE = cards and MINDX_TASK_ID). Pure: returns data.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ascendify.errors import AscendifyError
from ascendify.launch.options import LaunchOptions, check, to_argv

KINDS = ("volcano", "pytorchjob", "ascendjob")
# The port the Kubeflow operator publishes as MASTER_PORT; our rendezvous listens on it.
PYTORCHJOB_PORT = 23456
# ascend-operator's port: the container port named ascendjob-port (2222 when none is named)
# becomes the Master service's port and every pod's MASTER_PORT.
ASCENDJOB_PORT = 2222
# The chip family MindCluster's scheduler places the pods on (ascend-910 for the first 910).
ASCENDJOB_CHIP_LABEL = "ascend-910b"
DEFAULT_ACCELERATOR = "huawei.com/Ascend910"
# Seconds a pod has after its SIGTERM beyond the launcher's --grace-period: Kubernetes' own
# default, for the outputs' last upload.
TERMINATION_ALLOWANCE = 30
# Settings that differ from pod to pod: a manifest's pods all run one command.
_PER_POD = {"node_rank": "--node-rank", "local_addr": "--local-addr"}


@dataclass(frozen=True)
class JobManifest:
    """A job for a Kubernetes engine: ``options`` (their command included) run in every pod,
    with ``env`` (Kubernetes env entries: ``{"name", "value"}`` or ``{"name", "valueFrom"}``)."""

    name: str
    image: str
    options: LaunchOptions
    accelerator: str = DEFAULT_ACCELERATOR
    env: tuple[Mapping[str, Any], ...] = ()

    @property
    def nnodes(self) -> int:
        return self.options.nnodes or 1

    @property
    def nproc_per_node(self) -> int:
        return int(self.options.nproc_per_node or 1)


def render(kind: str, job: JobManifest) -> dict[str, Any]:
    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", job.name):
        raise AscendifyError(f"job name {job.name!r} is not a Kubernetes name (a-z, 0-9, '-')")
    job = _complete(job)
    if kind == "volcano":
        return _volcano(job)
    if kind == "pytorchjob":
        return _pytorchjob(job)
    if kind == "ascendjob":
        return _ascendjob(job)
    raise AscendifyError(f"unknown manifest kind {kind!r}; choose from {', '.join(KINDS)}")


def _complete(job: JobManifest) -> JobManifest:
    """``job`` with its counts written out (every pod's cards are its resources), or the
    setting no pod can honour named."""
    options = check(job.options)
    for name, flag in _PER_POD.items():
        if getattr(options, name) is not None:
            raise AscendifyError(
                f"{flag}: every pod of a manifest runs the same command; the platform gives "
                "each pod its own"
            )
    nproc = options.nproc_per_node or "1"
    if not nproc.isdecimal():
        raise AscendifyError(
            f"a manifest needs a number for --nproc-per-node (cards per pod), not {nproc!r}"
        )
    if not options.command:
        raise AscendifyError("no command to run: give CMD ARGS..., e.g. `python train.py`")
    return replace(job, options=replace(options, nnodes=job.nnodes, nproc_per_node=nproc))


def _launcher_command(job: JobManifest) -> list[str]:
    return ["ascendify", "run", *to_argv(job.options)]


def _container(job: JobManifest, name: str, port: int, port_name: str) -> dict[str, Any]:
    cards = {job.accelerator: job.nproc_per_node}
    return {
        "name": name,
        "image": job.image,
        "command": _launcher_command(job),
        "ports": [{"name": port_name, "containerPort": port}],
        "env": [*job.env, {"name": "MASTER_PORT", "value": str(port)}],
        "resources": {"requests": dict(cards), "limits": dict(cards)},
    }


def _pod_spec(container: dict[str, Any], job: JobManifest) -> dict[str, Any]:
    """A pod that runs ``container`` once, and waits for the launcher's grace period."""
    grace = math.ceil(job.options.grace_period) + TERMINATION_ALLOWANCE
    return {
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": grace,
        "containers": [container],
    }


def _restart_policy(job: JobManifest) -> str:
    """Kubeflow's and MindCluster's: with restarts, a pod that exits by a signal (exit code
    above 128: lost, killed) is started again; an exit code of its own (the launcher's restarts
    spent, a bad input) ends the job."""
    return "ExitCode" if job.options.max_restarts else "Never"


def _port(job: JobManifest, default: int) -> int:
    return job.options.master_port or default


def _volcano(job: JobManifest) -> dict[str, Any]:
    from ascendify.launch.topology import DEFAULT_MASTER_PORT

    container = _container(job, "train", _port(job, DEFAULT_MASTER_PORT), "rendezvous")
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": job.name},
        "spec": {
            "schedulerName": "volcano",
            "minAvailable": job.nnodes,  # gang scheduling: all nodes or none
            "plugins": {"env": [], "svc": []},
            "maxRetry": job.options.max_restarts,
            # With restarts, a lost pod starts the job again (the launchers restart the ranks
            # after a failure themselves); maxRetry bounds both.
            "policies": (
                [{"event": "PodEvicted", "action": "RestartJob"}]
                if job.options.max_restarts
                else [{"event": "PodEvicted", "action": "AbortJob"}]
            ),
            "tasks": [
                {
                    "name": "worker",  # VC_WORKER_HOSTS / VC_WORKER_NUM, as on ModelArts
                    "replicas": job.nnodes,
                    "template": {"spec": _pod_spec(container, job)},
                }
            ],
        },
    }


def _pytorchjob(job: JobManifest) -> dict[str, Any]:
    def replica(count: int) -> dict[str, Any]:
        container = _container(job, "pytorch", _port(job, PYTORCHJOB_PORT), "pytorchjob-port")
        container["env"] = list(job.env)  # the operator sets MASTER_PORT itself
        return {
            "replicas": count,
            "restartPolicy": _restart_policy(job),
            "template": {"spec": _pod_spec(container, job)},
        }

    replicas = _master_and_workers(job, replica)
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": job.name},
        "spec": {
            "runPolicy": {"backoffLimit": job.options.max_restarts},
            "pytorchReplicaSpecs": replicas,
        },
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
        container = _container(job, "ascend", _port(job, ASCENDJOB_PORT), "ascendjob-port")
        # The operator sets MASTER_PORT; ascend-docker-runtime mounts the cards Volcano chose,
        # which it reads from this variable (the pod's annotation named after the resource).
        annotation = f"metadata.annotations['{job.accelerator}']"
        container["env"] = [
            *job.env,
            {
                "name": "ASCEND_VISIBLE_DEVICES",
                "valueFrom": {"fieldRef": {"fieldPath": annotation}},
            },
        ]
        return {
            "replicas": count,
            "restartPolicy": _restart_policy(job),
            "template": {"metadata": {"labels": dict(chip)}, "spec": _pod_spec(container, job)},
        }

    replicas = _master_and_workers(job, replica)
    return {
        "apiVersion": "mindxdl.gitee.com/v1",
        "kind": "AscendJob",
        "metadata": {"name": job.name, "labels": {"framework": "pytorch", **chip}},
        "spec": {
            "schedulerName": "volcano",
            "runPolicy": {
                "backoffLimit": job.options.max_restarts,
                "schedulingPolicy": {"minAvailable": job.nnodes, "queue": "default"},
            },
            "successPolicy": "AllWorkers",
            "replicaSpecs": replicas,
        },
    }
