"""Each node of a job is a ModelArts training container: its ranks start in the job dir, which
holds the code under its own name, and see ModelArts' variables with this job's values."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from ascendify.jobs.container import container_env
from ascendify.jobs.layout import JobLayout
from ascendify.jobs.plan import CodeFiles, node_plan
from ascendify.jobs.spec import JobSpec, SpecError, pairs, resolve
from ascendify.jobs.store import JobStore
from ascendify.launch.platforms import detect_platform
from tests.jobs.conftest import JobCli, wait_for

# ModelArts training container variables: the tables of the variables ModelArts sets in a
# training container (paths, distributed training, job metadata), plus VK_TASK_INDEX, which
# Volcano's env plugin sets beside VC_TASK_INDEX, and MA_VJ_NAME, the job name ModelArts'
# launcher derives JOB_ID from. PATH and the library paths are the machine's own.
TRAINING_CONTAINER_VARIABLES = {
    "MA_HOME", "MA_JOB_DIR", "MA_MOUNT_PATH", "MA_LOG_DIR", "MA_SCRIPT_INTERPRETER", "WORKSPACE",
    "MA_CURRENT_IP", "MA_NUM_GPUS", "MA_TASK_NAME", "MA_NUM_HOSTS", "VC_TASK_INDEX",
    "VC_WORKER_NUM", "VC_WORKER_HOSTS", "MA_CURRENT_INSTANCE_NAME", "VK_TASK_INDEX", "MA_VJ_NAME",
}  # fmt: skip

# The boot file of the end-to-end test: positional arguments, a data file opened by a path
# relative to the job dir, as on ModelArts; it prints what it saw as one JSON line per rank.
TRAIN = """\
import json, os, subprocess, sys
steps, width = int(sys.argv[1]), int(sys.argv[2])
with open("proj/data/x.txt") as data:
    text = data.read().strip()
seen = {k: v for k, v in os.environ.items() if k.startswith(("MA_", "VC_", "VK_")) or k == "WORKSPACE"}
record = {"args": [steps, width], "data": text, "cwd": os.getcwd(), "env": seen,
          "code": os.path.realpath("proj"), "rank": int(os.environ["RANK"])}
if os.environ["LOCAL_RANK"] == "0":  # what `ascendify run` in the job reads from the variables
    plan = subprocess.run([sys.executable, "-m", "ascendify", "run", "--dry-run", "true"],
                          capture_output=True, text=True, check=True)
    record["plan"] = {k: v for k, v in json.loads(plan.stdout).items()
                      if k in ("platform", "nnodes", "node_rank", "master_addr", "world_size", "job_id")}
print("SEEN " + json.dumps(record), flush=True)
"""


def _spec(tmp_path: Path, **fields: object) -> JobSpec:
    code = tmp_path / "proj"
    code.mkdir(exist_ok=True)
    (code / "train.py").write_text("print('hi')\n")
    return resolve({"code_dir": str(code), "boot_file": "train.py", **fields})


def test_every_node_gets_the_container_variables_with_its_values(tmp_path: Path) -> None:
    spec = _spec(tmp_path, nodes=2, cards=4)
    layout = JobLayout(Path("/jobs/j1"), "j1")
    addresses = ("10.0.0.1", "10.0.0.2")
    env = container_env(spec, layout, node=1, addresses=addresses)
    assert set(env) == TRAINING_CONTAINER_VARIABLES
    assert env["MA_JOB_DIR"] == "/jobs/j1/work/worker-1/user-job-dir"
    assert env["WORKSPACE"] == "/jobs/j1/work/worker-1/user-job-dir/proj"
    assert env["MA_MOUNT_PATH"] == env["MA_HOME"] == "/jobs/j1/work/worker-1"
    assert env["MA_LOG_DIR"] == "/jobs/j1/logs/worker-1"
    assert env["MA_CURRENT_INSTANCE_NAME"] == "modelarts-job-j1-worker-1"
    # The launcher reads the job's topology from them, as it does on ModelArts.
    detected = detect_platform(env)
    assert detected.platform == "modelarts"
    assert detected.facts == {
        "node_rank": "1", "nnodes": "2", "master_addr": "10.0.0.1", "local_addr": "10.0.0.2",
        "nproc_per_node": "4", "job_id": "modelarts-job-j1",
    }  # fmt: skip
    # Every rank of the node inherits them from the node agent.
    files = CodeFiles(requirements=False, pre_start=False)
    plan = node_plan(
        spec, layout, node=1, addresses=addresses, master_port=1, python="py", files=files
    )
    assert {k: plan.env[k] for k in env} == env


def test_a_cpu_flavor_has_no_cards_and_one_node_lists_itself(tmp_path: Path) -> None:
    spec = _spec(tmp_path, flavor="CPU: 8 核 32GB")
    env = container_env(spec, JobLayout(Path("/j"), "j"), node=0, addresses=("127.0.0.1",))
    assert (env["MA_NUM_GPUS"], env["MA_NUM_HOSTS"], env["VC_WORKER_HOSTS"]) == (
        "0", "1", "127.0.0.1",
    )  # fmt: skip
    # Without a flavor, the ranks per node stand for the cards (a launch script starts as many).
    plain = _spec(tmp_path, cards=2)
    assert (
        container_env(plain, JobLayout(Path("/j"), "j"), node=0, addresses=("a",))["MA_NUM_GPUS"]
        == "2"
    )


def test_the_code_keeps_its_own_name(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    assert (spec.code_name, spec.code_folder) == ("proj", "proj")
    # The runner and a rerun get the snapshot as code_dir: the name stays the code's.
    snapshot = JobSpec.from_json({**spec.to_json(), "code_dir": "/jobs/j1/code"})
    assert snapshot.code_folder == "proj"
    dotted = resolve({"code_dir": str(tmp_path / "proj" / ".."), "boot_file": "proj/train.py"})
    assert dotted.code_folder == tmp_path.name
    # A spec stored before the field existed: the name of its code_dir.
    old = {k: v for k, v in spec.to_json().items() if k != "code_name"}
    assert JobSpec.from_json(old).code_folder == "proj"
    with pytest.raises(SpecError, match="code_name: expected a folder name"):
        _spec(tmp_path, code_name="../x")


def test_a_script_named_from_inside_the_code_dir_is_refused_with_the_path_to_use(
    tmp_path: Path,
) -> None:
    with pytest.raises(SpecError, match=r"code as proj/ \(as on ModelArts\); write proj/train\.py"):
        _spec_command(tmp_path, "accelerate launch --num_processes 2 train.py --lr 1")
    assert _spec_command(tmp_path, "python proj/train.py 10 5").code_folder == "proj"
    # What is not a script of the code is the command's own business.
    assert _spec_command(tmp_path, "python -c 'print(1)' x.py").boot_command


def _spec_command(tmp_path: Path, command: str) -> JobSpec:
    _spec(tmp_path)
    return resolve({"code_dir": str(tmp_path / "proj"), "boot_command": command})


@pytest.mark.parametrize("name", ["MA_JOB_DIR", "VC_TASK_INDEX", "WORKSPACE"])
def test_env_may_not_set_what_the_job_sets(tmp_path: Path, name: str) -> None:
    with pytest.raises(SpecError, match=f"env: {name} is set by the job on every node"):
        _spec(tmp_path, env={name: "x"})
    with pytest.raises(SpecError, match=f"env: {name} is set by the job"):
        pairs([f"{name}=x"], "env", {})


def test_place_code_links_the_copy_under_its_name(tmp_path: Path) -> None:
    layout = JobLayout(tmp_path / "job", "j")
    (layout.code / "data").mkdir(parents=True)
    (layout.code / "data" / "x.txt").write_text("42")
    placed = layout.place_code(0, "proj")
    assert placed == layout.job_dir(0) / "proj"
    assert (layout.job_dir(0) / "proj" / "data" / "x.txt").read_text() == "42"
    assert not os.path.isabs(os.readlink(placed))  # the job dir may move with the store
    assert layout.place_code(0, "proj") == placed  # a node started again finds it in place


@pytest.mark.slow
def test_a_modelarts_project_runs_unchanged(job: JobCli, tmp_path: Path, jobs_dir: Path) -> None:
    code = tmp_path / "proj"
    (code / "data").mkdir(parents=True)
    (code / "data" / "x.txt").write_text("hello 42\n")
    (code / "train.py").write_text(TRAIN)
    # `python` is this interpreter, as in an activated virtual environment.
    path = {"PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    result = job(
        "submit", "--code-dir", str(code), "--nodes", "2", "--cards", "2", "--hang-timeout", "0",
        "--boot-command", "python proj/train.py 10 5", "--wait", env=path,
    )  # fmt: skip
    job_id = result.stdout.splitlines()[0]
    assert result.returncode == 0, job("describe", job_id).stdout
    seen = _seen(job("logs", job_id).stdout)
    assert sorted(seen) == [0, 1, 2, 3]
    root = (jobs_dir / job_id).resolve()
    for rank, record in seen.items():
        node = rank // 2
        job_dir = root / "work" / f"worker-{node}" / "user-job-dir"
        assert (record["args"], record["data"]) == ([10, 5], "hello 42")
        assert Path(record["cwd"]).resolve() == job_dir
        assert Path(record["code"]) == root / "code"
        assert set(record["env"]) == TRAINING_CONTAINER_VARIABLES
        env = {k: v for k, v in record["env"].items() if k not in ("MA_JOB_DIR", "WORKSPACE")}
        assert Path(record["env"]["MA_JOB_DIR"]).resolve() == job_dir
        assert Path(record["env"]["WORKSPACE"]).resolve() == root / "code"
        assert env == {
            "MA_HOME": str(jobs_dir / job_id / "work" / f"worker-{node}"),
            "MA_MOUNT_PATH": str(jobs_dir / job_id / "work" / f"worker-{node}"),
            "MA_LOG_DIR": str(jobs_dir / job_id / "logs" / f"worker-{node}"),
            "MA_SCRIPT_INTERPRETER": "",
            "MA_CURRENT_IP": f"127.0.0.{node + 1}",
            "MA_NUM_GPUS": "2",
            "MA_TASK_NAME": "worker",
            "MA_NUM_HOSTS": "2",
            "VC_TASK_INDEX": str(node),
            "VK_TASK_INDEX": str(node),
            "VC_WORKER_NUM": "2",
            "VC_WORKER_HOSTS": "127.0.0.1,127.0.0.2",
            "MA_CURRENT_INSTANCE_NAME": f"modelarts-job-{job_id}-worker-{node}",
            "MA_VJ_NAME": f"ma-job-{job_id}",
        }
        if rank % 2 == 0:  # `ascendify run` inside the job reads the job's topology
            assert record["plan"] == {
                "platform": {"name": "modelarts", "reason": "MA_NUM_HOSTS set"},
                "nnodes": 2, "node_rank": node,
                "master_addr": "127.0.0.1", "world_size": 4, "job_id": f"modelarts-job-{job_id}",
            }  # fmt: skip
    # A rerun runs on the same snapshot, which keeps the code's own name.
    again = job("rerun", job_id, env=path)
    assert again.returncode == 0, again.stderr
    second = again.stdout.strip()
    store = JobStore(jobs_dir)
    wait_for(lambda: store.get(second).state in ("succeeded", "failed"), 600, "the rerun")
    assert store.get(second).state == "succeeded", job("describe", second).stdout
    assert sorted(_seen(job("logs", second).stdout)) == [0, 1, 2, 3]


def _seen(logs: str) -> dict[int, dict[str, object]]:
    records = [json.loads(line) for line in re.findall(r"\]: SEEN (\{.*\})$", logs, re.M)]
    return {int(str(record["rank"])): record for record in records}
