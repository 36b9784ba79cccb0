"""What ``job submit --dry-run`` prints: a Kubernetes manifest, or each node's plan. Pure.

The Kubernetes manifests (Volcano, PyTorchJob, AscendJob) come from the launcher's emitter (the
pods run ``ascendify run`` with the job's settings, as a local job's nodes do); the container
image must hold the code, and the boot file is given relative to the image's working directory.
Every pod gets the job's env and ModelArts' variables; a secret's value (a secret-shaped name, a
URL with a password) comes from the Kubernetes Secret ``<name>-env``, never from the manifest.
"""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ascendify.jobs.container import pod_env
from ascendify.jobs.layout import JobLayout
from ascendify.jobs.plan import code_files, launch_options, loopback_addresses, node_plans
from ascendify.jobs.spec import JobSpec, masked
from ascendify.launch.manifests import JobManifest, render

_PLACEHOLDER_ID = "<job id>"
_PLACEHOLDER_PORT = 0  # chosen when the job starts


def manifest(spec: JobSpec) -> dict[str, Any]:
    assert spec.image is not None  # resolve() requires it for these engines
    job = JobManifest(
        name=spec.name,
        image=spec.image,
        options=launch_options(spec, spec.command("python", Path("."))),
        env=(*_env(spec), *pod_env(spec)),
    )
    return render(spec.engine, job)


def secret_name(spec: JobSpec) -> str:
    """The Kubernetes Secret the pods read the job's secret values from."""
    return f"{spec.name}-env"


def _env(spec: JobSpec) -> list[dict[str, Any]]:
    return [
        {"name": name, "value": value}
        if masked(name, value) == value
        else {"name": name, "valueFrom": {"secretKeyRef": {"name": secret_name(spec), "key": name}}}
        for name, value in spec.env.items()
    ]


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
