"""A real two-node Ray cluster on this machine, for the Ray engine's tests and benchmark.

Ray replaces 127.0.0.1 by the host's outward address wherever it is given (it assumes a
cluster spans machines), so the nodes use the other loopback addresses: the head on 127.0.0.2,
the second node on 127.0.0.3. CPU resources, and NPU ones in name only when asked (Ray assigns
them and sets ASCEND_RT_VISIBLE_DEVICES as on an Ascend host). Each ``ray start --block`` runs in its own
session and is ended through it; the Ray workers, which start their own sessions, die with
their node's raylet.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil

HEAD_ADDRESS = "127.0.0.2"
NODE_ADDRESS = "127.0.0.3"
# A bound, not a speed: on a machine whose two cores are shared (load 7), a node's start and the
# first ray.init took minutes.
START_TIMEOUT = 600.0  # tests/conftest.py's HANG_BOUND: this file also runs as a script


def _free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def _start(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    ray = str(Path(sys.executable).with_name("ray"))
    with log.open("wb") as out:
        return subprocess.Popen(
            [ray, "start", "--block", "--disable-usage-stats", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"},
        )


def _nodes_alive(address: str) -> int:
    script = (
        f"import ray; ray.init(address={address!r}, logging_level='ERROR', log_to_driver=False); "
        "print(sum(n['Alive'] for n in ray.nodes()))"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
        )
    except subprocess.TimeoutExpired:  # a loaded machine: the caller asks again until its deadline
        return 0
    return int(done.stdout.strip() or 0)


def _stop(process: subprocess.Popen[bytes]) -> list[psutil.Process]:
    """End a ``ray start --block`` and its node; returns what still ran below it."""
    alive = _stop_group(process.pid)
    process.wait()
    return alive


def _stop_group(leader: int) -> list[psutil.Process]:
    """End the session of ``ray start`` process ``leader`` and every process below it (Ray
    workers run in sessions of their own); returns what still runs."""
    below: list[psutil.Process] = []
    with contextlib.suppress(psutil.Error):
        below = psutil.Process(leader).children(recursive=True)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(leader, signal.SIGTERM)
    with contextlib.suppress(psutil.Error):
        psutil.Process(leader).wait(timeout=5)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(leader, signal.SIGKILL)  # what did not stop on SIGTERM
    for found in below:
        with contextlib.suppress(psutil.Error):
            found.kill()
    _gone, alive = psutil.wait_procs(below, timeout=10)
    return alive


def _guard() -> subprocess.Popen[bytes]:
    """A watchdog, in a session of its own, that ends the cluster if this process ends without
    the teardown: an interrupted pytest-xdist worker is ended before its fixtures' teardown.
    It is told each node's ``ray start`` pid, then ``done`` by the teardown; its input closing
    before ``done`` means this process is gone."""
    return subprocess.Popen(
        [sys.executable, __file__, "--guard"], stdin=subprocess.PIPE, start_new_session=True
    )


def _tell(guard: subprocess.Popen[bytes], line: str) -> None:
    assert guard.stdin is not None
    guard.stdin.write(f"{line}\n".encode())
    guard.stdin.flush()


def _watch() -> None:
    """The guard's side: remember the pids it is told; at end of input without ``done``, end them."""
    leaders: list[int] = []
    for line in sys.stdin:
        if line.strip() == "done":
            return
        leaders.append(int(line))
    for leader in reversed(leaders):
        _stop_group(leader)


@contextlib.contextmanager
def ray_cluster(
    cpus_per_node: int = 2, dashboard: bool = False, npus_per_node: int = 0, nodes: int = 2
) -> Iterator[str]:
    """Start a head and (``nodes`` 2) a second node; yield the cluster address; tear all down.

    ``dashboard`` also starts the head's dashboard on port 8265 (``ray job submit`` needs it).
    """
    # Ray's unix sockets need a short path (about 100 characters at most).
    temp = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))
    port = _free_port(HEAD_ADDRESS)
    address = f"{HEAD_ADDRESS}:{port}"
    common = [f"--num-cpus={cpus_per_node}", "--num-gpus=0"]
    if npus_per_node:
        common.append(f'--resources={{"NPU": {npus_per_node}}}')
    processes = [
        _start(
            ["--head", f"--node-ip-address={HEAD_ADDRESS}", f"--port={port}",
             f"--include-dashboard={str(dashboard).lower()}", f"--dashboard-host={HEAD_ADDRESS}",
             f"--temp-dir={temp}", *common],
            temp / "head.log",
        )
    ]  # fmt: skip
    guard = _guard()
    _tell(guard, str(processes[0].pid))
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            with contextlib.suppress(OSError):
                socket.create_connection((HEAD_ADDRESS, port), timeout=1).close()
                break
            if time.monotonic() > deadline or processes[0].poll() is not None:
                raise RuntimeError(f"Ray head did not start: {(temp / 'head.log').read_text()}")
            time.sleep(0.2)
        if nodes == 2:
            processes.append(
                _start([f"--address={address}", f"--node-ip-address={NODE_ADDRESS}", *common],
                       temp / "node.log")
            )  # fmt: skip
            _tell(guard, str(processes[1].pid))
        while _nodes_alive(address) < nodes:
            if time.monotonic() > deadline or processes[-1].poll() is not None:
                log = temp / ("node.log" if nodes == 2 else "head.log")
                raise RuntimeError(f"Ray node did not join: {log.read_text()}")
            time.sleep(0.5)
        yield address
    finally:
        left = [found for process in reversed(processes) for found in _stop(process)]
        _tell(guard, "done")
        guard.wait()
        shutil.rmtree(temp, ignore_errors=True)
        assert not left, f"Ray processes outlived the cluster: {left}"


if __name__ == "__main__" and sys.argv[1:] == ["--guard"]:
    _watch()
elif __name__ == "__main__":
    started = time.monotonic()
    with ray_cluster() as cluster:
        print(f"cluster {cluster} up in {time.monotonic() - started:.1f}s", flush=True)
        ready = time.monotonic()
    print(f"torn down in {time.monotonic() - ready:.1f}s")
