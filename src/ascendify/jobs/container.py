"""ModelArts' training container as each node of a job sees it: its folders and variables. Pure.

On ModelArts a node's boot command starts in ``MA_JOB_DIR`` (``/home/ma-user/modelarts/
user-job-dir``), which holds the code directory under its own name, and the platform sets the
variables below. A job node gets the same, with this job's values: scripts written for ModelArts
(``NNODES=$MA_NUM_HOSTS``, ``MASTER_ADDR=${VC_WORKER_HOSTS%%,*}``, ``open("proj/data/x.txt")``)
run unchanged, and ``ascendify run`` inside the job reads the job's topology from them.

| ModelArts                                         | a job's node ``n``                           |
|---------------------------------------------------|----------------------------------------------|
| ``MA_HOME`` ``/home/ma-user``                     | ``work/worker-<n>/`` (the node's folder)     |
| ``MA_MOUNT_PATH`` ``/home/ma-user/modelarts``     | ``work/worker-<n>/`` (staged channels there) |
| ``MA_JOB_DIR`` ``.../modelarts/user-job-dir``     | ``work/worker-<n>/user-job-dir/``            |
| ``.../user-job-dir/<code dir name>/``              | a link to the job's code copy ``code/``      |
| ``MA_LOG_DIR`` ``/home/ma-user/modelarts/log``    | ``logs/worker-<n>/`` (copied to ``log_url``) |
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ascendify.jobs.flavor import parse_flavor

if TYPE_CHECKING:
    from ascendify.jobs.layout import JobLayout
    from ascendify.jobs.spec import JobSpec

TASK_NAME = "worker"  # ModelArts' role of PyTorch and MindSpore nodes (its Volcano task)
# Files of the code a node runs before the launcher, as ModelArts does.
PRE_START_SCRIPT = "ma-pre-start.sh"
REQUIREMENTS = "requirements.txt"

# Every variable a node's processes get; a job's env may not set them (as on ModelArts, where
# users may not define MA_* variables).
CONTAINER_VARIABLES = (
    "MA_HOME", "MA_MOUNT_PATH", "MA_JOB_DIR", "MA_LOG_DIR", "MA_SCRIPT_INTERPRETER", "WORKSPACE",
    "MA_CURRENT_IP", "MA_NUM_GPUS", "MA_TASK_NAME", "MA_NUM_HOSTS", "VC_TASK_INDEX",
    "VK_TASK_INDEX", "VC_WORKER_NUM", "VC_WORKER_HOSTS", "MA_CURRENT_INSTANCE_NAME", "MA_VJ_NAME",
)  # fmt: skip


def container_env(
    spec: JobSpec, layout: JobLayout, *, node: int, addresses: tuple[str, ...]
) -> dict[str, str]:
    """The variables of node ``node``'s training container, whose nodes are at ``addresses``."""
    job_dir = layout.job_dir(node)
    return {
        # Folders: a node has no /home/ma-user of its own, so its folder stands for it.
        "MA_HOME": str(layout.workdir(node)),
        "MA_MOUNT_PATH": str(layout.workdir(node)),
        "MA_JOB_DIR": str(job_dir),
        "MA_LOG_DIR": str(layout.launcher_dir(node)),
        "MA_SCRIPT_INTERPRETER": "",  # empty on ModelArts too
        "WORKSPACE": str(job_dir / spec.code_folder),
        # Topology: the node addresses stand for the nodes' DNS names.
        "MA_CURRENT_IP": addresses[node],
        "MA_NUM_GPUS": str(accelerator_cards(spec)),
        "MA_TASK_NAME": TASK_NAME,
        "MA_NUM_HOSTS": str(spec.nodes),
        "VC_TASK_INDEX": str(node),
        "VK_TASK_INDEX": str(node),
        "VC_WORKER_NUM": str(spec.nodes),
        "VC_WORKER_HOSTS": ",".join(addresses),
        # Names: JOB_ID is modelarts-job-<id>, which ModelArts derives from ma-job-<id>.
        "MA_CURRENT_INSTANCE_NAME": f"{layout.platform_job_id}-{TASK_NAME}-{node}",
        "MA_VJ_NAME": _vj_name(layout.job_id),
    }


def pod_env(spec: JobSpec) -> list[dict[str, Any]]:
    """The variables of a Kubernetes pod of the job, as Kubernetes env entries: those the job
    is the same for every pod, the pod's own name and address from the pod itself. Volcano's
    plugins add VC_TASK_INDEX, VK_TASK_INDEX, VC_WORKER_NUM and VC_WORKER_HOSTS; the folders
    (MA_HOME, MA_JOB_DIR, ...) are the image's: a pod has no job store."""
    same = {
        "MA_SCRIPT_INTERPRETER": "",
        "MA_NUM_GPUS": str(accelerator_cards(spec)),
        "MA_TASK_NAME": TASK_NAME,
        "MA_NUM_HOSTS": str(spec.nodes),
        "MA_VJ_NAME": _vj_name(spec.name),
    }
    own = {"MA_CURRENT_IP": "status.podIP", "MA_CURRENT_INSTANCE_NAME": "metadata.name"}
    return [{"name": name, "value": value} for name, value in same.items()] + [
        {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}} for name, path in own.items()
    ]


def _vj_name(job_id: str) -> str:
    """``MA_VJ_NAME``: ModelArts' job id ``modelarts-job-<id>`` is derived from it."""
    return f"ma-job-{job_id}"


def accelerator_cards(spec: JobSpec) -> int:
    """``MA_NUM_GPUS``: the node's cards, 0 for a CPU-only flavor (as ModelArts says it). A job
    without a flavor counts its ranks per node as cards, so that launch scripts start as many."""
    if spec.flavor is not None and parse_flavor(spec.flavor).accelerator is None:
        return 0
    return spec.cards
