"""Multi-node jobs: two agents x two ranks on 127.0.0.1 and 127.0.0.2, meeting through TCPStore."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import psutil
import pytest

from ascendify.launch.ports import free_port
from tests.conftest import HANG_BOUND, ascendify_env

pytestmark = pytest.mark.slow  # every test here starts processes

FIXTURES = Path(__file__).parent / "fixtures"
PROBE = str(FIXTURES / "probe.py")
FAIL_OR_HANG = str(FIXTURES / "fail_or_hang.py")
ADDRESSES = ("127.0.0.1", "127.0.0.2")


@pytest.fixture
def launchers() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:  # a failed assertion must not leave agents behind
        if process.poll() is None:
            process.kill()
        process.communicate()


def start(
    started: list[subprocess.Popen[str]], argv: Sequence[str], env: dict[str, str]
) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", *argv],
        env=ascendify_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    started.append(process)
    return process


def flags_node(node: int, port: int, tmp_path: Path, script: str, *extra: str) -> list[str]:
    return [
        "ascendify",
        "run",
        "--nnodes",
        "2",
        "--node_rank",
        str(node),
        "--master_addr",
        ADDRESSES[0],
        "--master_port",
        str(port),
        "--local_addr",
        ADDRESSES[node],
        "--nproc_per_node",
        "2",
        "--hccn-conf",
        str(FIXTURES / f"hccn_node{node}.conf"),
        "--log-dir",
        str(tmp_path / f"logs{node}"),
        "--join-timeout",
        "30",
        *extra,
        "python",
        script,
    ]


def start_nodes(
    started: list[subprocess.Popen[str]],
    port: int,
    tmp_path: Path,
    script: str,
    env: dict[str, str],
) -> tuple[subprocess.Popen[str], subprocess.Popen[str]]:
    """Both nodes' launchers, each running ``script`` on two ranks."""
    node0 = start(started, flags_node(0, port, tmp_path, script), env)
    return node0, start(started, flags_node(1, port, tmp_path, script), env)


def wait_for_files(folder: Path, pattern: str, count: int, timeout: float = HANG_BOUND) -> None:
    """Until ``count`` files match ``pattern`` (ranks write them once they run), or the timeout."""
    deadline = time.monotonic() + timeout
    while len(list(folder.glob(pattern))) < count and time.monotonic() < deadline:
        time.sleep(0.05)


def finish(
    processes: Sequence[subprocess.Popen[str]], timeout: float = HANG_BOUND
) -> list[tuple[int, str]]:
    """Each launcher's exit code and stderr; one that does not end within ``timeout`` (a hang
    bound) fails the test, naming it."""
    results = []
    for process in processes:
        try:
            _out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"`{' '.join(map(str, process.args))}` did not end within {timeout:g}s"  # type: ignore[arg-type]
            ) from None
        results.append((process.returncode, err))
    return results


def records(out: Path) -> dict[int, dict[str, Any]]:
    return {int(p.stem.split("_")[1]): json.loads(p.read_text()) for p in out.glob("rank_*.json")}


def test_two_nodes_with_torchrun_flags(
    tmp_path: Path, launchers: list[subprocess.Popen[str]]
) -> None:
    port = free_port()
    env = {"PROBE_OUT": str(tmp_path)}
    nodes = start_nodes(launchers, port, tmp_path, PROBE, env)
    for code, err in finish(nodes):
        assert code == 0, err
    ranks = records(tmp_path)
    assert sorted(ranks) == [0, 1, 2, 3]
    envs: dict[int, dict[str, str]] = {rank: record["env"] for rank, record in ranks.items()}
    for rank, record in ranks.items():
        env = envs[rank]
        assert isinstance(env, dict)
        assert record["sum"] == 10.0  # 1+2+3+4: one process group across both agents
        assert env["RANK"] == env["RANK_ID"] == str(rank)
        assert env["LOCAL_RANK"] == env["DEVICE_ID"] == str(rank % 2)
        assert env["GROUP_RANK"] == str(rank // 2)
        assert env["WORLD_SIZE"] == env["RANK_SIZE"] == "4"
        assert env["MASTER_ADDR"] == "127.0.0.1"
    assert (
        len({(e["JOB_ID"], e["MASTER_PORT"]) for e in envs.values()}) == 1
    )  # agreed at rendezvous
    table = ranks[3]["rank_table"]
    assert table == ranks[0]["rank_table"]
    assert table == {
        "status": "completed",
        "version": "1.0",
        "server_count": "2",
        "server_list": [
            {
                "server_id": "127.0.0.1",
                "device": [
                    {"device_id": "0", "device_ip": "192.168.100.10", "rank_id": "0"},
                    {"device_id": "1", "device_ip": "192.168.100.11", "rank_id": "1"},
                ],
            },
            {
                "server_id": "127.0.0.2",
                "device": [
                    {"device_id": "0", "device_ip": "192.168.101.10", "rank_id": "2"},
                    {"device_id": "1", "device_ip": "192.168.101.11", "rank_id": "3"},
                ],
            },
        ],
    }


def test_two_nodes_with_modelarts_variables_only(
    tmp_path: Path, launchers: list[subprocess.Popen[str]]
) -> None:
    """The same command on both nodes; the platform's v0 template decides devices and ranks."""
    config = tmp_path / "config"
    config.mkdir()
    template = json.loads((FIXTURES / "v0_two_pods.json").read_text())
    for instance, address in zip(
        template["group_list"][0]["instance_list"], ADDRESSES[::-1], strict=True
    ):
        instance["server_id"] = address  # pod -1 is listed first and lives on 127.0.0.2
    (config / "jobstart_hccl.json").write_text(json.dumps(template))
    port = str(free_port())
    nodes = []
    for node in (0, 1):
        env = {
            "PROBE_OUT": str(tmp_path),
            "MA_NUM_HOSTS": "2",
            "VC_TASK_INDEX": str(node),
            "VC_WORKER_HOSTS": ",".join(ADDRESSES),
            "MA_NUM_GPUS": "2",
            "MA_VJ_NAME": "ma-job-77",
            "MA_CURRENT_INSTANCE_NAME": f"job-trainjob-{node}",
            "RANK_TABLE_FILE": str(config),
            "MA_LOG_DIR": str(tmp_path / f"node{node}"),
            "MASTER_PORT": port,
        }
        (tmp_path / f"node{node}").mkdir()
        nodes.append(
            start(launchers, ["ascendify.davincirun", "python", PROBE, "--data_url=/d"], env)
        )
    for code, err in finish(nodes):
        assert code == 0, err
    ranks = records(tmp_path)
    assert sorted(ranks) == [0, 1, 2, 3]
    for rank, record in ranks.items():
        env = record["env"]
        assert isinstance(env, dict)
        assert record["sum"] == 10.0
        assert record["argv"] == ["--data_url=/d"]
        assert (env["RANK"], env["GROUP_RANK"], env["JOB_ID"]) == (
            str(rank),
            str(rank // 2),
            "modelarts-job-77",
        )
        table = record["rank_table"]
        assert isinstance(table, dict)
        assert [s["server_id"] for s in table["server_list"]] == list(ADDRESSES)
        assert env["RANK_TABLE_FILE"] == str(tmp_path / f"node{rank // 2}" / "rank_table.json")


def live(pids_dir: Path) -> list[int]:
    pids = [int(pid) for f in pids_dir.glob("pids_*") for pid in f.read_text().split()]
    assert pids, "no hanging rank ever started"
    return [
        p
        for p in pids
        if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE
    ]


def test_rank_failure_on_node_1_stops_node_0_quickly(
    tmp_path: Path, launchers: list[subprocess.Popen[str]]
) -> None:
    port = free_port()
    env = {"PROBE_OUT": str(tmp_path), "FAIL_RANK": "3", "FAIL_AFTER": "1.5"}
    node0, node1 = start_nodes(launchers, port, tmp_path, FAIL_OR_HANG, env)
    deadline = time.monotonic() + HANG_BOUND
    while node1.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    failed_at = time.monotonic()
    (code0, err0), (code1, err1) = finish([node0, node1], timeout=HANG_BOUND)
    # Node 0's ranks would wait forever: any bound far below the hang bound shows it stopped them.
    assert time.monotonic() - failed_at < 60, "node 0 did not stop its ranks"
    assert code1 == 7
    assert "rank 3 (node 1, local rank 1" in err1
    # the console showed the rank's output: only the one-line cause names it again
    assert [
        line for line in err1.splitlines() if "boom-marker" in line and "cause" not in line
    ] == []
    assert code0 == 7
    assert "stopped because node 1 failed: rank 3 (node 1, local rank 1" in err0
    assert "stopped 2 running rank(s) of this node" in err0
    assert live(tmp_path) == []


def test_sigterm_to_one_node_stops_the_whole_job(
    tmp_path: Path, launchers: list[subprocess.Popen[str]]
) -> None:
    port = free_port()
    env = {"PROBE_OUT": str(tmp_path)}
    node0, node1 = start_nodes(launchers, port, tmp_path, FAIL_OR_HANG, env)
    wait_for_files(tmp_path, "pids_*", 4)
    node1.send_signal(signal.SIGTERM)
    (code0, err0), (code1, _err1) = finish([node0, node1], timeout=HANG_BOUND)
    assert code1 == 128 + signal.SIGTERM
    assert code0 == 128 + signal.SIGTERM
    assert "node 1 failed: launcher stopped by SIGTERM" in err0
    assert live(tmp_path) == []


def test_a_stop_signal_ends_node_0s_wait_for_its_peers(
    tmp_path: Path, launchers: list[subprocess.Popen[str]]
) -> None:
    # Node 0's ranks finish at once and it waits for node 1 (up to the 30 s join timeout) to keep
    # the store up; the platform's stop signal must end that wait, and node 1 must then stop too.
    port = free_port()
    script = str(tmp_path / "node0_finishes_first.py")
    Path(script).write_text(
        "import os, pathlib, time\n"
        "out = pathlib.Path(os.environ['PROBE_OUT'])\n"
        "if os.environ['GROUP_RANK'] == '0':\n"
        "    (out / f\"done_{os.environ['RANK']}\").touch()\n"
        "else:\n"
        "    (out / f\"pids_{os.environ['RANK']}\").write_text(str(os.getpid()))\n"
        "    time.sleep(120)\n"
    )
    env = {"PROBE_OUT": str(tmp_path)}
    node0, node1 = start_nodes(launchers, port, tmp_path, script, env)
    wait_for_files(tmp_path, "done_*", 2)
    time.sleep(1.0)  # node 0's agent has seen its ranks end and waits for node 1
    assert node0.poll() is None, node0.communicate()[1]
    signalled = time.monotonic()
    node0.send_signal(signal.SIGTERM)
    (code0, err0), (code1, err1) = finish([node0, node1], timeout=HANG_BOUND)
    assert time.monotonic() - signalled < 25, (
        "node 0 kept waiting for its peers (30 s join timeout)"
    )
    assert code0 == 0, err0  # its own ranks had all finished
    assert "all 2 ranks finished" in err0
    assert code1 != 0
    assert "lost contact with node 0" in err1
    assert live(tmp_path) == []


def test_missing_node_times_out_naming_it(
    tmp_path: Path, launchers: list[subprocess.Popen[str]]
) -> None:
    port = free_port()
    argv = [
        "ascendify",
        "run",
        "--nnodes",
        "3",
        "--node-rank",
        "0",
        "--master-addr",
        "127.0.0.1",
        "--master-port",
        str(port),
        "--join-timeout",
        "1.5",
        "--log-dir",
        str(tmp_path),
        "python",
        "-c",
        "pass",
    ]
    started = time.monotonic()
    [(code, err)] = finish([start(launchers, argv, {})], timeout=HANG_BOUND)
    assert code == 2
    assert "node(s) 1, 2 did not join within 1.5s" in err
    # It waited its 1.5 s, not the default 300 s (starting and importing torch may take a while).
    assert time.monotonic() - started < 120


def test_node_without_a_master_says_so(
    tmp_path: Path, launchers: list[subprocess.Popen[str]]
) -> None:
    argv = [
        "ascendify",
        "run",
        "--nnodes",
        "2",
        "--node-rank",
        "1",
        "--master-addr",
        "127.0.0.1",
        "--master-port",
        str(free_port()),
        "--join-timeout",
        "1",
        "--log-dir",
        str(tmp_path),
        "python",
        "-c",
        "pass",
    ]
    [(code, err)] = finish([start(launchers, argv, {})], timeout=HANG_BOUND)
    assert code == 2
    assert "node 1 could not reach node 0 at 127.0.0.1:" in err


@pytest.fixture
def two_hosts() -> Iterator[list[tuple[str, str, str]]]:
    """Two network namespaces joined by a veth pair: (namespace, address, interface) each.

    Skipped where the machine does not allow creating namespaces.
    """
    if shutil.which("ip") is None or os.geteuid() != 0:
        pytest.skip("network namespaces need root and iproute2")
    tag = f"asc{os.getpid() % 100000}"
    hosts = [(f"{tag}n0", "10.231.7.1", f"{tag}a"), (f"{tag}n1", "10.231.7.2", f"{tag}b")]
    steps = [["ip", "netns", "add", name] for name, _, _ in hosts]
    steps.append(["ip", "link", "add", hosts[0][2], "type", "veth", "peer", "name", hosts[1][2]])
    for name, address, interface in hosts:
        steps += [
            ["ip", "link", "set", interface, "netns", name],
            ["ip", "-n", name, "addr", "add", f"{address}/24", "dev", interface],
            ["ip", "-n", name, "link", "set", interface, "up"],
            ["ip", "-n", name, "link", "set", "lo", "up"],
        ]
    try:
        for step in steps:
            done = subprocess.run(
                step, capture_output=True, text=True, timeout=HANG_BOUND, check=False
            )
            if done.returncode != 0:
                pytest.skip(f"cannot build network namespaces here: {done.stderr.strip()}")
        yield hosts
    finally:
        for name, _, _ in hosts:
            subprocess.run(
                ["ip", "netns", "del", name], capture_output=True, timeout=10, check=False
            )


def test_agents_on_separate_network_hosts(
    tmp_path: Path, launchers: list[subprocess.Popen[str]], two_hosts: list[tuple[str, str, str]]
) -> None:
    nodes = []
    for node, (namespace, address, interface) in enumerate(two_hosts):
        argv = [
            "ip", "netns", "exec", namespace, sys.executable, "-m", "ascendify", "run",
            "--nnodes", "2", "--node-rank", str(node), "--master-addr", two_hosts[0][1],
            "--master-port", "29555", "--local-addr", address, "--nproc-per-node", "2",
            "--hccn-conf", str(FIXTURES / f"hccn_node{node}.conf"),
            "--log-dir", str(tmp_path / f"logs{node}"), "--join-timeout", "30", "python", PROBE,
        ]  # fmt: skip
        env = {"PROBE_OUT": str(tmp_path), "GLOO_SOCKET_IFNAME": interface}
        process = subprocess.Popen(
            argv, env=ascendify_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        launchers.append(process)
        nodes.append(process)
    for code, err in finish(nodes):
        assert code == 0, err
    ranks = records(tmp_path)
    assert sorted(ranks) == [0, 1, 2, 3]
    assert {record["sum"] for record in ranks.values()} == {10.0}
    servers = [s["server_id"] for s in ranks[0]["rank_table"]["server_list"]]
    assert servers == ["10.231.7.1", "10.231.7.2"]
