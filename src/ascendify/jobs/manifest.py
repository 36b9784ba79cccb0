"""What ``job submit --dry-run`` prints: a Kubernetes manifest, or each node's plan. Pure.

The Kubernetes manifests (Volcano, PyTorchJob, AscendJob) come from the launcher's emitter (the
pods run ``ascendify run`` as ``ascendify run --emit`` would write it); the container image must
hold the code, and the boot file is given relative to the image's working directory.
"""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ascendify.jobs.layout import JobLayout
from ascendify.jobs.plan import code_files, loopback_addresses, node_plans
from ascendify.jobs.spec import JobSpec
from ascendify.launch.manifests import JobManifest, render

_PLACEHOLDER_ID = "<job id>"
_PLACEHOLDER_PORT = 0  # chosen when the job starts


def manifest(spec: JobSpec) -> dict[str, Any]:
    assert spec.image is not None  # resolve() requires it for these engines
    job = JobManifest(
        name=spec.name,
        image=spec.image,
        nnodes=spec.nodes,
        nproc_per_node=spec.cards,
        command=spec.command("python", Path(".")),
    )
    return render(spec.engine, job)


def node_plans_json(spec: JobSpec) -> list[dict[str, Any]]:
    """Each node's steps, with the job directory and rendezvous port still to be chosen."""
    layout = JobLayout(Path(f"<jobs dir>/{_PLACEHOLDER_ID}"), _PLACEHOLDER_ID)
    addresses = (
        loopback_addresses(spec.nodes)
        if spec.engine == "local"
        else tuple(f"<node {n} address>" for n in range(spec.nodes))
    )
    plans = node_plans(
        spec,
        layout,
        addresses=addresses,
        master_port=_PLACEHOLDER_PORT,
        python=sys.executable,
        files=code_files(spec.code_dir),
    )
    return [
        {**asdict(plan), "env": sorted(plan.env), "steps": [asdict(s) for s in plan.steps]}
        for plan in plans
    ]
