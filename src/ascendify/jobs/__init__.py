"""Training jobs, ModelArts-style: a spec -> a recorded job run by an engine (local or Ray).

Library use::

    from ascendify.jobs import JobStore, resolve, service

    store = JobStore(default_dir())
    job = service.submit(store, resolve({"boot_file": "train.py", "nodes": 2, "cards": 2}))
    service.wait(store, job.id).state  # "succeeded"

Stages: :mod:`~ascendify.jobs.spec` (file/flags -> checked spec, pure), :mod:`~ascendify.jobs.plan`
(spec -> each node's ``ascendify run`` command, pure), :mod:`~ascendify.jobs.store` (SQLite),
engines :mod:`~ascendify.jobs.local_engine` and :mod:`~ascendify.jobs.ray_engine` driven by the
detached :mod:`~ascendify.jobs.runner`, and :mod:`~ascendify.jobs.service` (what ``job`` does).
"""

from __future__ import annotations

from ascendify.jobs import service
from ascendify.jobs.flavor import Flavor, FlavorError, parse_flavor
from ascendify.jobs.spec import JobSpec, SpecError, load_spec_file, resolve
from ascendify.jobs.store import JobRecord, JobStore, default_dir

__all__ = [
    "Flavor",
    "FlavorError",
    "JobRecord",
    "JobSpec",
    "JobStore",
    "SpecError",
    "default_dir",
    "load_spec_file",
    "parse_flavor",
    "resolve",
    "service",
]
