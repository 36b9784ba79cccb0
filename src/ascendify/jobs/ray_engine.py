"""The Ray engine: one placement-group bundle per node, each running the node agent.

The bundles are ``STRICT_SPREAD`` (one per Ray node; Ascend cards are Ray's ``NPU`` resource,
a CPU-only job asks for one CPU per node). The Ray node holding bundle 0 hosts the rendezvous
(a first small task finds a port free there). Then one task per bundle unpacks the code
snapshot on its node and runs :func:`ascendify.jobs.node.run_node` there, exactly as the local
engine does, streaming the node's logs back to the job directory. ``job stop`` raises a flag the
tasks poll (they stop their node gracefully); tasks still running after the grace period are
cancelled outright, and the node agents die with their Ray worker (see
:mod:`ascendify.jobs.keeper`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Generator, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ascendify.errors import AscendifyError
from ascendify.explain.sources import open_regular
from ascendify.jobs.flavor import parse_flavor
from ascendify.jobs.layout import JobLayout
from ascendify.jobs.node import UPLOAD_ALLOWANCE, NodeResult, kept, run_node
from ascendify.jobs.plan import code_files, node_plan
from ascendify.jobs.spec import JobSpec
from ascendify.jobs.store import JobStore, NodeRecord
from ascendify.launch.ports import free_port
from ascendify.runfolder import RANK_LOG_GLOB, SUMMARY_NAME

ADDRESS_VARIABLE = "RAY_ADDRESS"
PLACEMENT_TIMEOUT = 120.0
STOP_POLL = 0.5
# What the node agents need to reach the object store, as the submitting shell has it. Passed to
# the tasks in memory; never written to the job store.
STORAGE_VARIABLES = (
    "S3_ENDPOINT", "S3_USE_HTTPS", "S3_VERIFY_SSL", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
    "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
)  # fmt: skip


def check_cluster(address: str | None) -> str:
    """The cluster address, checked: Ray installed, something answers there, and it takes this
    process's authentication token where it asks for one."""
    address = address or os.environ.get(ADDRESS_VARIABLE)
    if not address:
        raise AscendifyError(f"engine ray needs --address HOST:PORT (or {ADDRESS_VARIABLE})")
    if importlib.util.find_spec("ray") is None:  # importing Ray itself takes a third of a second
        raise AscendifyError("engine ray needs Ray: pip install 'ascendify[ray]'")
    host, colon, port = address.rpartition(":")
    if address.startswith("ray://") or not colon or not port.isdigit():
        raise AscendifyError(f"Ray address {address!r}: expected HOST:PORT of the cluster's head")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as error:
        raise AscendifyError(
            f"no Ray cluster answers at {address} ({error.strerror or error}): "
            "is `ray start --head` running there?"
        ) from None
    _check_token(address)
    return address


def _check_token(address: str) -> None:
    """Ask the cluster's control store once, as ``ray.init`` would: a cluster started with token
    authentication (Ray's default from 2.61) refuses a missing or wrong token, which the job's
    runner would otherwise meet later, in its own log, as "Failed to connect"."""
    try:
        # The client ray.init uses; not a public module (nor typed).
        from ray._raylet import GcsClient  # type: ignore[attr-defined]
        from ray.exceptions import AuthenticationError
    except ImportError:  # a Ray without token authentication (before 2.52), or a new layout
        return
    try:
        GcsClient(address=address)
    except AuthenticationError as error:
        first = str(error).split(". ")[0].removeprefix("RPC error: ")
        raise AscendifyError(
            f"the Ray cluster at {address} refused this machine's token ({first}): give its token "
            "as RAY_AUTH_TOKEN (or a file: RAY_AUTH_TOKEN_PATH, ~/.ray/auth_token) with "
            "RAY_AUTH_MODE=token, which the job's runner inherits"
        ) from None


def bundle(spec: JobSpec) -> dict[str, float]:
    """What one node of the job reserves: its Ascend cards, else one CPU."""
    if spec.flavor is not None and parse_flavor(spec.flavor).accelerator == "Ascend":
        return {"NPU": float(spec.cards)}
    return {"CPU": 1.0}


def node_resources(spec: JobSpec) -> dict[str, Any]:
    """What a node's task asks of its bundle: the NPU cards, so that Ray assigns them and sets
    ASCEND_RT_VISIBLE_DEVICES for the task (the node's launcher and its ranks inherit it)."""
    cards = bundle(spec)
    return {"resources": cards} if "NPU" in cards else {}


def run_nodes(
    spec: JobSpec, layout: JobLayout, store: JobStore, stop: threading.Event
) -> list[NodeResult]:
    import ray
    from ray.util.placement_group import placement_group, remove_placement_group
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    assert spec.address is not None  # checked at submit
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    ray.init(address=spec.address, logging_level=logging.ERROR, log_to_driver=False)
    for sig, handler in handlers.items():  # Ray's own would end the runner on `job stop`
        signal.signal(sig, handler)
    group = placement_group([bundle(spec)] * spec.nodes, strategy="STRICT_SPREAD")
    try:
        ready, _ = ray.wait([group.ready()], timeout=PLACEMENT_TIMEOUT)
        if not ready:
            raise AscendifyError(
                f"the Ray cluster has no room for {spec.nodes} node(s) of {bundle(spec)} "
                f"on separate Ray nodes within {PLACEMENT_TIMEOUT:g}s"
            )

        def on(node: int) -> dict[str, Any]:
            strategy = PlacementGroupSchedulingStrategy(group, placement_group_bundle_index=node)
            # A node that failed is the job's failure: Ray must not run it again.
            return {"num_cpus": 0, "scheduling_strategy": strategy, "max_retries": 0}

        addresses = _addresses(ray, group, spec.nodes)
        # Node 0's agent hosts the rendezvous: a port free on its machine (one node needs none).
        master_port = ray.get(_free_port.options(**on(0)).remote()) if spec.nodes > 1 else 0
        flag = _StopFlag.options(num_cpus=0).remote()
        code = ray.put(_zip(layout.code))
        storage = {k: os.environ[k] for k in STORAGE_VARIABLES if k in os.environ}
        for node, address in enumerate(addresses):
            store.set_node(layout.job_id, NodeRecord(node, address, None, None, None))
            layout.link_rank_logs(node, spec.cards)

        def task(n: int) -> Any:
            options = {**on(n), **node_resources(spec), "num_returns": "streaming"}
            return _run_node.options(**options).remote(
                NodeTask(spec, layout.job_id, n, addresses, master_port, storage), code, flag
            )

        streams = [task(n) for n in range(spec.nodes)]
        allowance = spec.grace_period + UPLOAD_ALLOWANCE
        again = _Again(task, spec.max_restarts, stop)
        outputs = _follow(
            ray, streams, layout, flag=flag, stop=stop, allowance=allowance, again=again
        )
        return [
            _collect(layout, store, addresses=addresses, node=node, output=out)
            for node, out in enumerate(outputs)
        ]
    finally:
        remove_placement_group(group)
        ray.shutdown()


class _Again:
    """Starts again the task of a node other than node 0 that died while the job goes on (its
    launcher joins the job's next attempt), as often as the job may restart."""

    def __init__(self, task: Any, restarts: int, stop: threading.Event) -> None:
        self._task = task
        self._left = restarts
        self._stop = stop
        self.node_0_ended = threading.Event()

    def __call__(self, node: int) -> Any | None:
        if node == 0 or self._left <= 0 or self._stop.is_set() or self.node_0_ended.is_set():
            return None
        self._left -= 1
        return self._task(node)


def _follow(
    ray: Any,
    streams: list[Any],
    layout: JobLayout,
    *,
    flag: Any,
    stop: threading.Event,
    allowance: float,
    again: _Again | None = None,
) -> list[dict[str, Any] | None]:
    """Copy each node's log output into the job dir as it comes; return each node's result.

    A stop raises the flag the tasks poll; tasks still running ``allowance`` seconds later are
    cancelled (their result is None). A task that dies is started ``again`` when it may be.
    """
    outputs: list[dict[str, Any] | None] = [None] * len(streams)

    def receive(node: int) -> None:
        while True:
            try:
                for ref in streams[node]:
                    item = ray.get(ref)
                    for name, data in item.get("logs", {}).items():
                        path = layout.logs / name
                        path.parent.mkdir(parents=True, exist_ok=True)
                        with path.open("ab") as log:
                            log.write(data)
                    if "summary" in item:
                        launcher = layout.launcher_dir(node)
                        launcher.mkdir(parents=True, exist_ok=True)
                        (launcher / SUMMARY_NAME).write_bytes(item["summary"])
                    if "exit_code" in item:
                        outputs[node] = item
                break
            except Exception as error:  # cancelled, or its worker died: the result is unknown
                # Said in the runner's log: the node's own log stops short without telling why.
                print(
                    f"node {node}: its Ray task ended without a result: {error!r}", file=sys.stderr
                )
                restarted = again(node) if again is not None else None
                if restarted is None:
                    break
                print(f"node {node}: its Ray task starts again", file=sys.stderr)
                streams[node] = restarted
        if node == 0 and again is not None:
            again.node_0_ended.set()

    readers = [threading.Thread(target=receive, args=(n,)) for n in range(len(streams))]
    for reader in readers:
        reader.start()
    deadline = None
    while any(reader.is_alive() for reader in readers):
        time.sleep(STOP_POLL)
        if stop.is_set() and deadline is None:
            ray.get(flag.set.remote())
            deadline = time.monotonic() + allowance
        if deadline is not None and time.monotonic() > deadline:
            for stream in streams:
                with contextlib.suppress(Exception):
                    ray.cancel(stream, force=True)
            deadline = float("inf")
    return outputs


def _collect(
    layout: JobLayout,
    store: JobStore,
    *,
    addresses: tuple[str, ...],
    node: int,
    output: dict[str, Any] | None,
) -> NodeResult:
    """A node's result, and its launcher's summary and rank table, into the job directory."""
    if output is None:
        result = NodeResult(node, 137, None)
    else:
        launcher = layout.launcher_dir(node)
        launcher.mkdir(parents=True, exist_ok=True)
        for name, content in output["launcher_files"].items():
            (launcher / name).write_bytes(content)
        result = NodeResult(node, output["exit_code"], output["failed_step"])
    store.set_node(layout.job_id, NodeRecord(node, addresses[node], None, None, result.exit_code))
    return result


def _zip(directory: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(directory.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(directory).as_posix())
    return buffer.getvalue()


def _remote(function: Any) -> Any:
    """Ray's decorator, applied when Ray is imported (it is an optional dependency)."""
    import ray

    return ray.remote(function)


class _LazyRemote:
    """A Ray remote function or actor class built on first use, so this module imports without
    Ray (``job validate``/``list`` never need it)."""

    def __init__(self, target: Any) -> None:
        self._target = target
        self._remote: Any = None

    def options(self, **options: Any) -> Any:
        if self._remote is None:
            self._remote = _remote(self._target)
        return self._remote.options(**options)


class _Flag:
    def __init__(self) -> None:
        self._set = False

    def set(self) -> None:
        self._set = True

    def is_set(self) -> bool:
        return self._set


def _addresses(ray: Any, group: Any, nodes: int) -> tuple[str, ...]:
    """The address of the Ray node that holds each bundle, in bundle order."""
    from ray.util import placement_group_table

    placed = placement_group_table(group)["bundles_to_node_id"]
    address_of = {node["NodeID"]: node["NodeManagerAddress"] for node in ray.nodes()}
    return tuple(str(address_of[placed[bundle]]) for bundle in range(nodes))


@dataclass(frozen=True)
class NodeTask:
    """What a node's task needs besides the code and the stop flag."""

    spec: JobSpec
    job_id: str
    node: int
    addresses: tuple[str, ...]
    master_port: int
    storage: dict[str, str]  # object-store settings and credentials from the submitting shell


def _node_task(task: NodeTask, code: bytes, flag: Any) -> Iterator[dict[str, Any]]:
    """On a Ray node: unpack the code and run this node of the job, streaming its log output;
    the last item is the node's result."""
    root = Path(tempfile.mkdtemp(prefix=f"ascendify-job-{task.job_id}-{task.node}-"))
    try:
        result = yield from _run_here(task, code, flag, root)
    finally:
        # Before the last item: once the runner has it, Ray may end this task at any moment.
        shutil.rmtree(root, ignore_errors=True)
    yield result


def _run_here(
    task: NodeTask, code: bytes, flag: Any, root: Path
) -> Generator[dict[str, Any], None, dict[str, Any]]:
    """Run the node in ``root``, yielding new log output; returns the node's result."""
    import ray

    spec, job_id, node = task.spec, task.job_id, task.node
    addresses, master_port = task.addresses, task.master_port
    layout = JobLayout(root, job_id)
    with zipfile.ZipFile(io.BytesIO(code)) as archive:
        archive.extractall(layout.code)
    layout.link_rank_logs(node, spec.cards)
    layout.place_code(node, spec.code_folder)
    plan = node_plan(
        spec,
        layout,
        node=node,
        addresses=addresses,
        master_port=master_port,
        python=sys.executable,
        files=code_files(layout.code),
    )
    # Only this node's processes get the credentials: the Ray worker's own environment stays clean.
    plan = kept(replace(plan, env={**plan.env, **task.storage}), sys.executable)
    stop = threading.Event()
    results: list[NodeResult] = []
    worker = threading.Thread(
        target=lambda: results.append(
            run_node(plan, cwd=layout.workdir(node), log_path=layout.worker_log(node),
                     stop=stop, grace_period=spec.grace_period)
        )
    )  # fmt: skip
    worker.start()
    shipped: dict[Path, int] = {}
    summary = _Summary(layout.launcher_dir(node) / SUMMARY_NAME)
    while worker.is_alive():
        worker.join(STOP_POLL)
        with contextlib.suppress(Exception):
            if not stop.is_set() and ray.get(flag.is_set.remote(), timeout=STOP_POLL):
                stop.set()
        new = _new_output(layout, node, shipped)
        if new:
            yield {"logs": new}
        changed = summary.changed()
        if changed is not None:  # an attempt ended: the job's store records restarts as they come
            yield {"summary": changed}
    new = _new_output(layout, node, shipped)
    if new:
        yield {"logs": new}
    (result,) = results
    launcher = layout.launcher_dir(node)
    return {
        "exit_code": result.exit_code,
        "failed_step": result.failed_step,
        "launcher_files": {
            p.name: p.read_bytes() for p in launcher.iterdir() if p.is_file() and p not in shipped
        },
    }


SUMMARY_LIMIT = 16 << 20  # bytes of a run summary read (its stacks make it grow past 256 KiB)


class _Summary:
    """The launcher's ``run_summary.json``, read again whenever it changed."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._seen: tuple[int, int] | None = None

    def changed(self) -> bytes | None:
        try:
            status = self._path.stat()
            if (status.st_mtime_ns, status.st_size) == self._seen:
                return None
            with open_regular(self._path) as handle:  # not a FIFO or /dev/zero a rank put there
                data = handle.read(SUMMARY_LIMIT + 1)
        except OSError:
            return None
        if len(data) > SUMMARY_LIMIT:
            return None
        self._seen = (status.st_mtime_ns, status.st_size)
        return data if data.startswith(b"{") else None  # not the room kept for it at the start


def _new_output(layout: JobLayout, node: int, shipped: dict[Path, int]) -> dict[str, bytes]:
    """What the node's worker log and rank logs gained since the last call, by name in logs/."""
    new: dict[str, bytes] = {}
    for path in [layout.worker_log(node), *layout.launcher_dir(node).glob(RANK_LOG_GLOB)]:
        with contextlib.suppress(OSError), open_regular(path) as log:  # a FIFO would block
            log.seek(shipped.get(path, 0))
            data = log.read()
            if data:
                new[path.relative_to(layout.logs).as_posix()] = data
                shipped[path] = shipped.get(path, 0) + len(data)
    return new


_free_port = _LazyRemote(free_port)
_run_node = _LazyRemote(_node_task)
_StopFlag = _LazyRemote(_Flag)
