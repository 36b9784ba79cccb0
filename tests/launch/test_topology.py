"""Platform variables -> spec: the platform table, precedence, device discovery, rank tables."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from ascendify.errors import AscendifyError
from ascendify.launch import LaunchOptions, resolve_spec
from ascendify.launch.devices import discover_devices
from ascendify.launch.platforms import detect_platform, expand_slurm_nodelist

FIXTURES = Path(__file__).parent / "fixtures"
PATH = {"PATH": os.environ["PATH"]}
PYTHON = LaunchOptions(command=("python", "train.py"))


@pytest.mark.parametrize(
    ("env", "platform", "facts"),
    [
        (
            {
                "MA_NUM_HOSTS": "2",
                "VC_TASK_INDEX": "1",
                "VC_WORKER_HOSTS": "w-0.job,w-1.job",
                "MA_NUM_GPUS": "8",
                "MA_VJ_NAME": "ma-job-42",
            },
            "modelarts",
            {
                "node_rank": "1",
                "nnodes": "2",
                "master_addr": "w-0.job",
                "local_addr": "w-1.job",
                "nproc_per_node": "8",
                "job_id": "modelarts-job-42",
            },
        ),
        (  # plain Volcano: env + svc plugins only
            {"VK_TASK_INDEX": "0", "VC_WORKER_HOSTS": "a,b,c"},
            "modelarts",
            {"node_rank": "0", "nnodes": "3", "master_addr": "a", "local_addr": "a"},
        ),
        (  # MindCluster: WORLD_SIZE counts processes, LOCAL_WORLD_SIZE per pod
            {
                "MASTER_ADDR": "m",
                "MASTER_PORT": "2000",
                "RANK": "1",
                "WORLD_SIZE": "16",
                "LOCAL_WORLD_SIZE": "8",
                "MINDX_TASK_ID": "uid",
            },
            "pytorchjob",
            {
                "node_rank": "1",
                "nnodes": "2",
                "master_addr": "m",
                "master_port": "2000",
                "nproc_per_node": "8",
                "job_id": "uid",
            },
        ),
        (  # Volcano's pytorch plugin: WORLD_SIZE counts pods
            {"MASTER_ADDR": "m", "RANK": "2", "WORLD_SIZE": "3"},
            "pytorchjob",
            {"node_rank": "2", "nnodes": "3", "master_addr": "m"},
        ),
        (
            {
                "PET_NNODES": "4",
                "PET_NODE_RANK": "3",
                "PET_NPROC_PER_NODE": "2",
                "MASTER_ADDR": "m",
                "RANK": "3",
                "WORLD_SIZE": "8",
            },
            "pytorchjob",
            {"node_rank": "3", "nnodes": "4", "nproc_per_node": "2", "master_addr": "m"},
        ),
        (
            {
                "SLURM_NODEID": "1",
                "SLURM_NNODES": "3",
                "SLURM_JOB_NODELIST": "gpu[07-09]",
                "SLURM_JOB_ID": "991",
            },
            "slurm",
            {"node_rank": "1", "nnodes": "3", "master_addr": "gpu07", "job_id": "991"},
        ),
        (
            {"OMPI_COMM_WORLD_RANK": "1", "OMPI_COMM_WORLD_SIZE": "2", "MASTER_ADDR": "h0"},
            "openmpi",
            {"node_rank": "1", "nnodes": "2", "master_addr": "h0"},
        ),
        ({"MASTER_PORT": "1234"}, "local", {"master_port": "1234"}),
    ],
)
def test_platform_table(env: dict[str, str], platform: str, facts: dict[str, str]) -> None:
    detected = detect_platform(env)
    assert detected.platform == platform
    assert {k: v for k, v in detected.facts.items() if k in facts} == facts
    assert set(facts) <= set(detected.facts)


def test_detection_says_why_and_where_each_fact_came_from() -> None:
    detected = detect_platform(
        {"MA_NUM_HOSTS": "2", "VC_WORKER_HOSTS": "a,b", "VC_TASK_INDEX": "1"}
    )
    assert detected.reason == "MA_NUM_HOSTS set"
    assert detected.origins["master_addr"] == "first of VC_WORKER_HOSTS"
    assert detected.origins["nnodes"] == "MA_NUM_HOSTS"


@pytest.mark.parametrize(
    ("nodelist", "hosts"),
    [
        ("n1", ["n1"]),
        ("node[01-03,7],gpu1", ["node01", "node02", "node03", "node7", "gpu1"]),
        ("a[9-10]", ["a9", "a10"]),
    ],
)
def test_slurm_nodelist(nodelist: str, hosts: list[str]) -> None:
    assert expand_slurm_nodelist(nodelist) == hosts


def test_flags_win_over_platform_variables() -> None:
    env = {
        **PATH,
        "MA_NUM_HOSTS": "2",
        "VC_TASK_INDEX": "1",
        "VC_WORKER_HOSTS": "a,b",
        "MA_NUM_GPUS": "4",
    }
    options = LaunchOptions(command=("python",), nproc_per_node="2", master_addr="10.1.1.1")
    spec = resolve_spec(options, env)
    assert (spec.nnodes, spec.node_rank, spec.nproc_per_node) == (2, 1, 2)
    assert spec.master_addr == "10.1.1.1"
    assert spec.origins["master_addr"] == "flag"
    assert spec.origins["node_rank"] == "modelarts: VC_TASK_INDEX"
    assert spec.master_port == 29500  # every node must agree on a port: torchrun's default


def fake_root(tmp_path: Path, devices: list[str]) -> Path:
    for name in devices:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    return tmp_path


def test_auto_counts_davinci_devices_and_honours_visible_devices(tmp_path: Path) -> None:
    root = fake_root(
        tmp_path, [f"dev/davinci{i}" for i in (0, 1, 2, 3, 10)] + ["dev/davinci_manager"]
    )
    found = discover_devices({}, root)
    assert (found.kind, found.ids) == ("npu", ("0", "1", "2", "3", "10"))
    visible = discover_devices({"ASCEND_RT_VISIBLE_DEVICES": "2,3,x,1"}, root)
    assert visible.ids == ("2", "3")  # the runtime stops at the first bad entry
    assert "ASCEND_RT_VISIBLE_DEVICES" in visible.reason


def test_auto_counts_nvidia_gpus_without_torch(tmp_path: Path) -> None:
    root = fake_root(
        tmp_path,
        [
            "proc/driver/nvidia/gpus/0000:01:00.0/information",
            "proc/driver/nvidia/gpus/0000:02:00.0/information",
        ],
    )
    found = discover_devices({}, root)
    assert (found.kind, found.ids) == ("cuda", ("0", "1"))


@pytest.mark.slow
def test_auto_asks_npu_smi_when_dev_is_not_visible(tmp_path: Path) -> None:
    tool = tmp_path / "bin" / "npu-smi"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\nprintf 'Total Count : 2\\n\\nNPU ID : 0\\nNPU ID : 1\\n'\n")
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    found = discover_devices({"PATH": str(tool.parent)}, tmp_path)
    assert (found.kind, found.ids) == ("npu", ("0", "1"))


def test_auto_without_devices_is_one_cpu_rank(tmp_path: Path) -> None:
    spec = resolve_spec(PYTHON, PATH, root=tmp_path)
    assert spec.nproc_per_node == 1
    assert spec.origins["nproc_per_node"].startswith("auto: no Ascend")


def test_npu_node_with_hccn_conf_knows_device_ips(tmp_path: Path) -> None:
    root = fake_root(tmp_path, ["dev/davinci0", "dev/davinci1"])
    (root / "etc").mkdir()
    shutil.copy(FIXTURES / "hccn_node0.conf", root / "etc" / "hccn.conf")
    spec = resolve_spec(PYTHON, PATH, root=root)
    assert spec.devices == ("0", "1")
    assert spec.device_ips == {"0": "192.168.100.10", "1": "192.168.100.11"}


def test_modelarts_v0_table_in_a_directory_decides_node_and_devices(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "v0_two_pods.json", tmp_path / "jobstart_hccl.json")
    env = {**PATH, "RANK_TABLE_FILE": str(tmp_path), "MA_CURRENT_INSTANCE_NAME": "job-trainjob-1"}
    spec = resolve_spec(PYTHON, env)
    assert (spec.nnodes, spec.node_rank, spec.nproc_per_node) == (2, 1, 2)
    assert spec.master_addr == "10.0.0.1"
    assert spec.device_ips == {"0": "192.168.1.10", "1": "192.168.1.11"}


def test_ambiguous_server_in_a_platform_table_is_an_error_not_a_guess() -> None:
    env = {**PATH, "RANK_TABLE_FILE_V_1_0": str(FIXTURES / "v1_0_two_servers.json")}
    with pytest.raises(AscendifyError, match="which of the rank table's 2 servers"):
        resolve_spec(PYTHON, env)


def test_nproc_disagreeing_with_the_platform_table_is_an_error() -> None:
    env = {**PATH, "RANK_TABLE_FILE_V_1_0": str(FIXTURES / "v1_2_a3.json")}
    with pytest.raises(AscendifyError, match="disagrees with the platform rank table"):
        resolve_spec(LaunchOptions(command=("python",), nproc_per_node="4"), env)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (LaunchOptions(command=("no-such-program-xyz",)), "command not found"),
        (LaunchOptions(command=()), "no command"),
        (
            LaunchOptions(command=("python",), nnodes=2, node_rank=2, master_addr="m"),
            "outside 0..1",
        ),
        (
            LaunchOptions(command=("python",), nproc_per_node="many"),
            "takes a number of at least 1 or 'auto'",
        ),
        (LaunchOptions(command=("python",), nnodes=2), "needs --master-addr"),
    ],
)
def test_bad_input_is_named(options: LaunchOptions, message: str) -> None:
    with pytest.raises(AscendifyError, match=message):
        resolve_spec(options, PATH)


def test_torchrun_style_script_and_module_run_under_python() -> None:
    assert resolve_spec(LaunchOptions(command=("train.py", "--lr=1")), PATH).command == (
        "python",
        "train.py",
        "--lr=1",
    )
    assert resolve_spec(LaunchOptions(command=("pkg.main",), module=True), PATH).command == (
        "python",
        "-m",
        "pkg.main",
    )


@pytest.mark.slow
def test_device_ips_from_hccn_tool_when_there_is_no_conf_file(tmp_path: Path) -> None:
    root = fake_root(tmp_path, ["dev/davinci0", "dev/davinci1"])
    tool = tmp_path / "bin" / "hccn_tool"
    tool.parent.mkdir()
    # hccn_tool -i <id> -ip -g prints the device's address and netmask
    tool.write_text('#!/bin/sh\nprintf "ipaddr:10.20.0.1%s\\nnetmask:255.255.255.0\\n" "$2"\n')
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    env = {"PATH": f"{tool.parent}{os.pathsep}{os.environ['PATH']}"}
    spec = resolve_spec(PYTHON, env, root=root)
    assert spec.device_ips == {"0": "10.20.0.10", "1": "10.20.0.11"}
    assert spec.origins["device_ips"] == "hccn_tool"


def test_working_directory_and_staging_dir(tmp_path: Path) -> None:
    given = resolve_spec(LaunchOptions(command=("python", "x.py"), cwd=tmp_path), env={})
    assert given.cwd == tmp_path.absolute()
    # The ranks move, the staged channels stay in the launcher's folder (a job's nodes share
    # the code copy the ranks run in).
    assert given.staging_dir == Path.cwd() != given.cwd
    assert resolve_spec(LaunchOptions(command=("python", "x.py")), env={}).cwd == Path.cwd()
    on_modelarts = resolve_spec(
        LaunchOptions(command=("python", "x.py")), env={"MA_MOUNT_PATH": str(tmp_path / "ma")}
    )
    assert on_modelarts.staging_dir == tmp_path / "ma"
