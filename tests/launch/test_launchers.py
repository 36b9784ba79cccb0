"""Nested launchers, the pure parts: which command lines are launchers, and what each rank gets."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ascendify.errors import AscendifyError
from ascendify.launch import LaunchOptions, LaunchSpec, plan_node, plan_to_json, resolve_spec
from ascendify.launch.launchers import (
    NestedLauncher,
    Topology,
    disagreement,
    left_out,
    recognise,
)
from ascendify.launch.plan import local_assignment

PATH = {"PATH": os.environ["PATH"]}
TOPOLOGY = Topology(nproc_per_node=2, nnodes=2, node_rank=1, master_addr="10.0.0.1", master_port=1)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (("accelerate", "launch", "--num_processes", "2", "t.py", "--lr", "1"),
         ("accelerate", ("--num_processes", "2", "t.py", "--lr", "1"))),
        (("/opt/env/bin/accelerate", "launch", "t.py"), ("accelerate", ("t.py",))),
        (("accelerate-launch", "t.py"), ("accelerate", ("t.py",))),
        (("deepspeed", "--num_gpus", "8", "t.py"), ("deepspeed", ("--num_gpus", "8", "t.py"))),
        (("ds", "t.py"), ("deepspeed", ("t.py",))),
        (("torchrun", "--nproc-per-node", "2", "t.py"),
         ("torchrun", ("--nproc-per-node", "2", "t.py"))),
        (("python", "-m", "accelerate.commands.launch", "t.py"), ("accelerate", ("t.py",))),
        (("python3", "-m", "deepspeed.launcher.runner", "t.py"), ("deepspeed", ("t.py",))),
        (("/usr/bin/python3.11", "-m", "torch.distributed.run", "t.py"), ("torchrun", ("t.py",))),
    ],
)  # fmt: skip
def test_launcher_forms_are_recognised(
    command: tuple[str, ...], expected: tuple[str, tuple[str, ...]]
) -> None:
    assert recognise(command) == expected


@pytest.mark.parametrize(
    "command",
    [
        ("python", "train.py"),
        ("accelerate", "config"),  # not a launch
        ("accelerate", "env"),
        ("python", "-m", "accelerate.commands.config"),
        ("python", "-m", "torch.utils.collect_env"),
        ("python", "deepspeed"),  # a script argument, not the launcher
        ("bash", "torchrun.sh"),
        ("mytorchrun", "t.py"),
        (),
    ],
)
def test_other_command_lines_stay_plain_commands(command: tuple[str, ...]) -> None:
    assert recognise(command) is None


def test_counts_that_disagree_are_named_in_one_line() -> None:
    stated = {
        "--num_processes": (8, 4),  # differs
        "--num_machines": (2, 2),  # agrees
        "--machine_rank": (None, 1),  # not named
    }
    line = disagreement("accelerate launch", stated, TOPOLOGY)
    assert line == (
        "accelerate launch asks for --num_processes 8 (the job: 4); ascendify's topology wins: "
        "2 node(s) x 2 rank(s)"
    )
    agreeing = {"--num_machines": (2, 2), "--machine_rank": ("1", 1)}
    assert disagreement("accelerate launch", agreeing, TOPOLOGY) == ""
    left = ["--hostfile h (ascendify places the nodes)"]
    assert disagreement("deepspeed", agreeing, TOPOLOGY, left) == (
        "deepspeed options ascendify leaves out: --hostfile h (ascendify places the nodes); "
        "ascendify's topology wins: 2 node(s) x 2 rank(s)"
    )


def test_options_given_and_not_applied_are_each_named_unknown_ones_too() -> None:
    defaults = argparse.Namespace(script="t.py", hostfile="/job/hostfile", bind=False, new=0)
    given = argparse.Namespace(script="u.py", hostfile="hosts", bind=True, new=3)
    assert left_out(given, defaults, {"script"}, {"hostfile": "placed"}, lambda d: "--" + d) == [
        "--hostfile hosts (placed)",
        "--bind (not applied by ascendify)",
        "--new 3 (not applied by ascendify)",
    ]
    assert left_out(defaults, defaults, (), {}, str) == []


def _spec(tmp_path: Path, launcher: NestedLauncher, **changes: Any) -> LaunchSpec:
    """A two-rank spec whose command a nested launcher gave."""
    options = LaunchOptions(command=("python", "t.py"), nproc_per_node="2", log_dir=tmp_path)
    spec = resolve_spec(options, PATH)
    return replace(spec, command=launcher.command, launcher=launcher, **changes)


def test_deepspeed_ranks_get_local_rank_after_the_script_and_its_variables(tmp_path: Path) -> None:
    launcher = NestedLauncher(
        "deepspeed",
        ("/py", "-u", "t.py", "--deepspeed_config", "ds.json"),
        local_rank_at=3,
        deepspeed_env=True,
    )
    spec = _spec(tmp_path, launcher, device_kind="npu", devices=("4", "5"))
    plan = plan_node(spec, local_assignment(spec, master_port=4321))
    assert [w.argv for w in plan.workers] == [
        ("/py", "-u", "t.py", "--local_rank=0", "--deepspeed_config", "ds.json"),
        ("/py", "-u", "t.py", "--local_rank=1", "--deepspeed_config", "ds.json"),
    ]
    env = plan.workers[1].env
    assert {k: env[k] for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_PORT")} == {
        "RANK": "1", "LOCAL_RANK": "1", "WORLD_SIZE": "2", "MASTER_PORT": "4321",
    }  # fmt: skip
    assert {k: env[k] for k in ("CROSS_RANK", "CROSS_SIZE", "LOCAL_SIZE")} == {
        "CROSS_RANK": "0", "CROSS_SIZE": "1", "LOCAL_SIZE": "2",
    }  # fmt: skip
    # Every card of the node is visible to each rank, which picks its own by LOCAL_RANK.
    assert env["ASCEND_RT_VISIBLE_DEVICES"] == "4,5"
    assert "CUDA_VISIBLE_DEVICES" not in env
    assert "OMP_NUM_THREADS" not in env  # DeepSpeed's launcher sets none; torchrun's 1 is not its


def test_torchrun_ranks_keep_torchruns_thread_default(tmp_path: Path) -> None:
    launcher = NestedLauncher("torchrun", ("/py", "-u", "t.py"))
    spec = _spec(tmp_path, launcher)
    env = plan_node(spec, local_assignment(spec, master_port=1)).workers[0].env
    assert env["OMP_NUM_THREADS"] == "1"


def test_a_resumed_deepspeed_rank_keeps_local_rank_after_the_script(tmp_path: Path) -> None:
    launcher = NestedLauncher("deepspeed", ("/py", "-u", "t.py"), local_rank_at=3)
    spec = _spec(tmp_path, launcher)
    plan = plan_node(spec, local_assignment(spec, master_port=1), resume=Path("/c/ckpt.pt"))
    assert plan.workers[0].argv == ("/py", "-u", "t.py", "--local_rank=0", "--resume=/c/ckpt.pt")


def test_deepspeed_on_cpu_ranks_sets_no_visible_devices(tmp_path: Path) -> None:
    launcher = NestedLauncher("deepspeed", ("/py", "-u", "t.py"), deepspeed_env=True)
    spec = _spec(tmp_path, launcher)
    env = plan_node(spec, local_assignment(spec, master_port=1)).workers[0].env
    assert spec.device_kind == "cpu"
    assert not {"ASCEND_RT_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"} & set(env)


def test_accelerate_environment_reaches_every_rank_under_ascendify_rank_variables(
    tmp_path: Path,
) -> None:
    launcher = NestedLauncher(
        "accelerate",
        ("/py", "-u", "t.py"),
        env={"ACCELERATE_MIXED_PRECISION": "bf16", "OMP_NUM_THREADS": "4", "RANK": "7"},
        disagreement="accelerate launch asks for --num_processes 8 (the job: 2); ...",
    )
    spec = _spec(tmp_path, launcher)
    plan = plan_node(spec, local_assignment(spec, master_port=1))
    for worker in plan.workers:
        assert worker.argv == ("/py", "-u", "t.py")  # no --local_rank
        assert worker.env["ACCELERATE_MIXED_PRECISION"] == "bf16"
        assert worker.env["OMP_NUM_THREADS"] == "4"  # the launcher's, not ascendify's default 1
        assert worker.env["RANK"] == str(worker.rank)  # ascendify's own variables win
        assert "CROSS_RANK" not in worker.env
    shown = plan_to_json(plan)
    assert shown["launcher"] == "accelerate"
    assert shown["launcher_note"].startswith("accelerate launch asks for --num_processes 8")
    assert shown["workers"][1]["env"]["ACCELERATE_MIXED_PRECISION"] == "bf16"


def test_a_plain_command_has_no_launcher(tmp_path: Path) -> None:
    options = LaunchOptions(command=("python", "t.py"), nproc_per_node="2", log_dir=tmp_path)
    spec = resolve_spec(options, PATH)
    shown = plan_to_json(plan_node(spec, local_assignment(spec, master_port=1)))
    assert (spec.launcher, shown["launcher"], shown["launcher_note"]) == (None, None, "")


def _resolve(tmp_path: Path, *command: str, cwd: Path | None = None) -> LaunchSpec:
    options = LaunchOptions(command=command, nproc_per_node="2", log_dir=tmp_path, cwd=cwd)
    return resolve_spec(options, PATH)


@pytest.mark.slow  # imports torch: seconds
def test_torchrun_is_read_with_torchs_own_parser(tmp_path: Path) -> None:
    spec = _resolve(tmp_path, "torchrun", "--nproc-per-node", "4", "--nnodes", "1:1", "-m",
                    "pkg.train", "--x", "1")  # fmt: skip
    assert spec.launcher is not None
    assert spec.launcher.name == "torchrun"
    assert spec.command == (sys.executable, "-u", "-m", "pkg.train", "--x", "1")
    assert spec.launcher.disagreement == (
        "torchrun asks for --nproc-per-node 4 (the job: 2); ascendify's topology wins: "
        "1 node(s) x 2 rank(s)"
    )
    assert spec.nproc_per_node == 2
    restarting = _resolve(tmp_path, "torchrun", "--max-restarts", "3", "--rdzv-backend", "c10d",
                          "--master-port", "29400", "t.py")  # fmt: skip
    assert restarting.launcher is not None
    assert restarting.launcher.disagreement == (
        "torchrun asks for --master-port 29400 (the job: a free port); options ascendify leaves "
        "out: --rdzv-backend c10d (ascendify places the nodes: --nnodes, --node-rank, "
        "--master-addr or the platform), --max-restarts 3 (use ascendify run --max-restarts); "
        "ascendify's topology wins: 1 node(s) x 2 rank(s)"
    )


@pytest.mark.slow  # imports torch: seconds
def test_a_launcher_usage_error_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(AscendifyError) as raised:
        _resolve(tmp_path, "torchrun", "--nproc-per-node", "2")
    assert str(raised.value).startswith("torchrun: ")
    assert "training_script" in str(raised.value)
    assert "\n" not in str(raised.value)


@pytest.mark.slow  # imports accelerate (and its config machinery): seconds
def test_accelerate_flags_and_config_file_give_its_environment(tmp_path: Path) -> None:
    pytest.importorskip("accelerate")
    (tmp_path / "cfg.yaml").write_text(
        "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_machines: 1\n"
        "num_processes: 8\nmixed_precision: fp16\ngpu_ids: all\n"
    )
    spec = _resolve(tmp_path, "accelerate", "launch", "--config_file", "cfg.yaml",
                    "--dynamo_backend", "no", "t.py", "--lr", "1", cwd=tmp_path)  # fmt: skip
    assert spec.launcher is not None
    assert spec.command == (sys.executable, "-u", "t.py", "--lr", "1")
    assert spec.launcher.env["ACCELERATE_MIXED_PRECISION"] == "fp16"  # from the config file
    assert spec.launcher.env["ACCELERATE_DYNAMO_BACKEND"] == "NO"
    assert not {"RANK", "WORLD_SIZE", "MASTER_PORT"} & set(spec.launcher.env)
    assert spec.launcher.disagreement.startswith(
        "accelerate launch asks for --num_processes 8 (the job: 2);"
    )
    restarting = _resolve(tmp_path, "accelerate", "launch", "--max_restarts", "2",
                          "--deepspeed_hostfile", "hosts", "t.py", cwd=tmp_path)  # fmt: skip
    assert restarting.launcher is not None
    assert restarting.launcher.disagreement == (
        "accelerate launch options ascendify leaves out: --max_restarts 2 (use ascendify run "
        "--max-restarts), --deepspeed_hostfile hosts (ascendify places the nodes: --nnodes, "
        "--node-rank, --master-addr or the platform); ascendify's topology wins: "
        "1 node(s) x 2 rank(s)"
    )


@pytest.mark.slow  # imports DeepSpeed: seconds
def test_deepspeed_options_are_read_with_its_own_parser(tmp_path: Path) -> None:
    pytest.importorskip("deepspeed")
    spec = _resolve(tmp_path, "deepspeed", "--num_nodes", "2", "--no_local_rank", "t.py", "a")
    assert spec.launcher is not None
    assert (spec.command, spec.launcher.local_rank_at) == (
        (sys.executable, "-u", "t.py", "a"),
        None,
    )
    assert spec.launcher.deepspeed_env
    assert spec.launcher.disagreement.startswith("deepspeed asks for --num_nodes 2 (the job: 1);")
    with_rank = _resolve(tmp_path, "python", "-m", "deepspeed.launcher.runner", "t.py", "a")
    assert with_rank.launcher is not None
    assert (with_rank.launcher.local_rank_at, with_rank.launcher.disagreement) == (3, "")
    # As DeepSpeedExamples' run_ds.sh starts it: each option that does not apply is named.
    included = _resolve(tmp_path, "deepspeed", "--hostfile", "hosts", "--include",
                        "localhost:0,1", "--bind_cores_to_rank", "t.py")  # fmt: skip
    assert included.launcher is not None
    devices = ",".join(included.devices)
    assert included.launcher.disagreement == (
        "deepspeed options ascendify leaves out: --hostfile hosts (ascendify places the nodes: "
        "--nnodes, --node-rank, --master-addr or the platform), --include localhost:0,1 (the "
        f"ranks use the job's devices {devices}: narrow them with ASCEND_RT_VISIBLE_DEVICES or "
        "CUDA_VISIBLE_DEVICES and --nproc-per-node), --bind_cores_to_rank (the ranks are not "
        "pinned to cores); ascendify's topology wins: 1 node(s) x 2 rank(s)"
    )
