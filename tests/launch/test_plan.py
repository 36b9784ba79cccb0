"""spec -> plan is pure: the per-rank contract, checked without starting anything."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ascendify.launch import LaunchOptions, NodeAssignment, plan_node, plan_to_json, resolve_spec
from ascendify.launch.plan import local_assignment

FIXTURES = Path(__file__).parent / "fixtures"
PATH = {"PATH": os.environ["PATH"]}


def test_env_contract_of_every_rank(tmp_path: Path) -> None:
    options = LaunchOptions(
        command=("python", "t.py"), nproc_per_node="2", log_dir=tmp_path, job_id="j1"
    )
    spec = resolve_spec(options, PATH)
    plan = plan_node(spec, local_assignment(spec, master_port=4321))
    assert [w.rank for w in plan.workers] == [0, 1]
    env = plan.workers[1].env
    assert {k: env[k] for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE")} == {
        "RANK": "1",
        "LOCAL_RANK": "1",
        "WORLD_SIZE": "2",
        "LOCAL_WORLD_SIZE": "2",
    }
    assert (env["MASTER_ADDR"], env["MASTER_PORT"]) == ("127.0.0.1", "4321")
    assert (env["GROUP_RANK"], env["NODE_RANK"]) == ("0", "0")
    assert (env["RANK_ID"], env["RANK_SIZE"], env["DEVICE_ID"], env["ASCEND_DEVICE_ID"]) == (
        "1",
        "2",
        "1",
        "1",
    )
    assert env["JOB_ID"] == "j1"
    assert env["HCCL_CONNECT_TIMEOUT"] == "1800"
    assert env["ASCEND_PROCESS_LOG_PATH"] == str(tmp_path / "ascend" / "rank_1")
    assert "RANK_TABLE_FILE" not in env  # no device IPs on this machine
    assert plan.workers[1].log_path == tmp_path / "rank_1.log"


def test_user_values_of_ascend_defaults_are_kept(tmp_path: Path) -> None:
    env = {
        **PATH,
        "HCCL_CONNECT_TIMEOUT": "600",
        "ASCEND_PROCESS_LOG_PATH": "/x",
        "OMP_NUM_THREADS": "4",
    }
    spec = resolve_spec(
        LaunchOptions(command=("python",), nproc_per_node="2", log_dir=tmp_path), env
    )
    worker = plan_node(spec, local_assignment(spec, 1)).workers[0]
    # not in the plan: the rank inherits the user's value unchanged
    assert {"HCCL_CONNECT_TIMEOUT", "ASCEND_PROCESS_LOG_PATH", "OMP_NUM_THREADS"}.isdisjoint(
        worker.env
    )


def test_device_ips_give_a_v1_table_for_this_node(tmp_path: Path) -> None:
    options = LaunchOptions(
        command=("python",),
        nproc_per_node="2",
        hccn_conf=FIXTURES / "hccn_node0.conf",
        log_dir=tmp_path,
        local_addr="10.9.9.9",
    )
    spec = resolve_spec(options, PATH)
    plan = plan_node(spec, local_assignment(spec, 1))
    assert plan.rank_table_file == tmp_path / "rank_table.json"
    assert plan.rank_table_to_write == {
        "status": "completed",
        "version": "1.0",
        "server_count": "1",
        "server_list": [
            {
                "server_id": "10.9.9.9",
                "device": [
                    {"device_id": "0", "device_ip": "192.168.100.10", "rank_id": "0"},
                    {"device_id": "1", "device_ip": "192.168.100.11", "rank_id": "1"},
                ],
            }
        ],
    }
    assert plan.workers[0].env["RANK_TABLE_FILE"] == str(tmp_path / "rank_table.json")


def test_platform_v1_table_is_used_in_place_with_its_rank_ids(tmp_path: Path) -> None:
    env = {
        **PATH,
        "RANK_TABLE_FILE_V_1_0": str(FIXTURES / "v1_0_two_servers.json"),
        "MA_CURRENT_HOST_IP": "10.0.0.2",
    }
    spec = resolve_spec(LaunchOptions(command=("python",), log_dir=tmp_path), env)
    plan = plan_node(spec, local_assignment(spec, 1))
    assert plan.rank_table_to_write is None
    assert plan.rank_table_file == FIXTURES / "v1_0_two_servers.json"
    assert [(w.rank, w.device_id, w.env["DEVICE_ID"]) for w in plan.workers] == [
        (2, "4", "0"),
        (3, "5", "1"),
    ]
    assert plan.workers[0].env["RANK_SIZE"] == "4"
    assert plan.node_rank == 1


def test_platform_v0_table_is_converted_next_to_the_logs(tmp_path: Path) -> None:
    table_dir = tmp_path / "config"
    table_dir.mkdir()
    shutil.copy(FIXTURES / "v0_two_pods.json", table_dir / "jobstart_hccl.json")
    env = {**PATH, "RANK_TABLE_FILE": str(table_dir), "MA_CURRENT_INSTANCE_NAME": "job-trainjob-0"}
    spec = resolve_spec(LaunchOptions(command=("python",), log_dir=tmp_path / "logs"), env)
    plan = plan_node(spec, local_assignment(spec, 1))
    assert plan.rank_table_file == tmp_path / "logs" / "rank_table.json"
    assert plan.rank_table_to_write is not None
    assert plan.rank_table_to_write["server_list"][0]["server_id"] == "10.0.0.1"
    assert [w.rank for w in plan.workers] == [0, 1]


def test_multi_node_assignment_offsets_ranks(tmp_path: Path) -> None:
    options = LaunchOptions(
        command=("python",),
        nproc_per_node="2",
        nnodes=2,
        node_rank=1,
        master_addr="h0",
        log_dir=tmp_path,
    )
    spec = resolve_spec(options, PATH)
    plan = plan_node(spec, NodeAssignment((3, 4), 5, 777, "shared", None))
    assert [(w.rank, w.local_rank) for w in plan.workers] == [(3, 0), (4, 1)]
    assert plan.workers[1].env["WORLD_SIZE"] == "5"
    assert plan.workers[1].env["JOB_ID"] == "shared"


def test_plan_json_names_the_platform_and_hides_inherited_env(tmp_path: Path) -> None:
    env = {**PATH, "SECRET_KEY": "s3cr3t", "MA_NUM_GPUS": "2", "MA_VJ_NAME": "ma-job-1"}
    spec = resolve_spec(LaunchOptions(command=("python",), log_dir=tmp_path, modelarts=True), env)
    data = plan_to_json(plan_node(spec, local_assignment(spec, 1)))
    assert data["platform"] == {"name": "modelarts", "reason": "MA_VJ_NAME set"}
    assert data["origins"]["nproc_per_node"] == "modelarts: MA_NUM_GPUS"
    assert data["job_id"] == "modelarts-job-1"
    assert "s3cr3t" not in str(data)


def test_the_variables_a_job_may_not_set_are_those_the_launcher_sets(tmp_path: Path) -> None:
    from ascendify.launch.plan import LAUNCHER_VARIABLES

    options = LaunchOptions(
        command=("python", "t.py"), nproc_per_node="2", log_dir=tmp_path, job_id="j1"
    )
    spec = resolve_spec(options, PATH)
    plan = plan_node(spec, local_assignment(spec, master_port=4321))
    # Defaults a job's env replaces, and PYTHONPATH, which the start hook's folder is put before.
    overridable = {
        "HCCL_CONNECT_TIMEOUT",
        "ASCEND_PROCESS_LOG_PATH",
        "OMP_NUM_THREADS",
        "PYTHONPATH",
    }
    for worker in plan.workers:
        assert set(worker.env) - overridable <= set(LAUNCHER_VARIABLES)
        assert set(LAUNCHER_VARIABLES) - {"RANK_TABLE_FILE"} <= set(worker.env)
