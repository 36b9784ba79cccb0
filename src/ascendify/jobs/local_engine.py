"""The local engine: every node of the job is a node agent on this machine, on its own loopback
address (127.0.0.1, 127.0.0.2, ...), so a multi-node job can be tried on one host.

A node agent (other than node 0's, which hosts the rendezvous, unless the job is elastic: then
the store moves to a surviving node) killed while the job runs is started again, as a platform
restarts a lost pod: it joins the job's next attempt, at most ``max_restarts`` times."""

from __future__ import annotations

import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import psutil

from ascendify.jobs.layout import JobLayout
from ascendify.jobs.node import NodeResult, run_node
from ascendify.jobs.plan import code_files, loopback_addresses, node_plans
from ascendify.jobs.spec import JobSpec
from ascendify.jobs.store import JobStore, NodeRecord


def run_nodes(
    spec: JobSpec, layout: JobLayout, store: JobStore, stop: threading.Event
) -> list[NodeResult]:
    addresses = loopback_addresses(spec.nodes)
    master_port = _rendezvous_port() if spec.nodes > 1 else 0  # one node: the launcher picks
    plans = node_plans(
        spec,
        layout,
        addresses=addresses,
        master_port=master_port,
        python=sys.executable,
        files=code_files(layout.code),
    )

    def started(node: int, process: psutil.Process) -> None:
        record = NodeRecord(node, addresses[node], process.pid, process.create_time(), None)
        store.set_node(layout.job_id, record)

    node_0_ended = threading.Event()

    def run(node: int) -> NodeResult:
        layout.link_rank_logs(node, spec.cards)
        layout.place_code(node, spec.code_folder)
        plan = plans[node]
        for rejoins in range(spec.max_restarts + 1):
            result = run_node(
                plan,
                cwd=layout.workdir(node),
                log_path=layout.worker_log(node),
                stop=stop,
                grace_period=spec.grace_period,
                started=started,
            )
            # An elastic job's store moves to a surviving node: node 0 may come back too.
            store_left = node == 0 and not spec.elastic
            job_goes_on = not (store_left or stop.is_set() or node_0_ended.is_set())
            if not (result.lost and job_goes_on and rejoins < spec.max_restarts):
                break
            plan = replace(plan, steps=plan.steps[-1:])  # the launcher alone joins again
        if node == 0:
            node_0_ended.set()
        store.set_node(
            layout.job_id, NodeRecord(node, addresses[node], None, None, result.exit_code)
        )
        return result

    with ThreadPoolExecutor(max_workers=spec.nodes) as pool:
        return list(pool.map(run, range(spec.nodes)))


def _rendezvous_port() -> int:
    # The launcher package is heavy to import; a one-node job starts without it here.
    from ascendify.launch.ports import free_port

    return free_port()
