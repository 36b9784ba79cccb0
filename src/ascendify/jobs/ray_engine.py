"""The Ray engine (placeholder until the next commit): refuses clearly."""

from __future__ import annotations

import threading

from ascendify.errors import AscendifyError
from ascendify.jobs.layout import JobLayout
from ascendify.jobs.node import NodeResult
from ascendify.jobs.spec import JobSpec
from ascendify.jobs.store import JobStore


def check_cluster(address: str | None) -> str:
    raise AscendifyError("the ray engine is not available yet")


def run_nodes(
    spec: JobSpec, layout: JobLayout, store: JobStore, stop: threading.Event
) -> list[NodeResult]:
    raise AscendifyError("the ray engine is not available yet")
