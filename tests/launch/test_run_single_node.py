"""``ascendify run`` on one node, with real processes: env contract, failures, signals, logs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.conftest import HANG_BOUND, RunCli, ascendify_env

pytestmark = pytest.mark.slow  # every test here starts processes

FIXTURES = Path(__file__).parent / "fixtures"
PROBE = str(FIXTURES / "probe.py")
FAIL_OR_HANG = str(FIXTURES / "fail_or_hang.py")


def records(out: Path) -> dict[int, dict[str, object]]:
    return {int(p.stem.split("_")[1]): json.loads(p.read_text()) for p in out.glob("rank_*.json")}


def test_env_contract_per_rank_with_gloo_all_reduce(run_cli: RunCli, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    result = run_cli(
        [
            "run",
            "--nproc_per_node",
            "2",
            "--hccn-conf",
            str(FIXTURES / "hccn_node0.conf"),
            "--log-dir",
            str(logs),
            "--job-id",
            "job-7",
            "python",
            PROBE,
            "--lr=0.1",
            "--data_url=/data/d",
        ],
        cwd=tmp_path,
        env={"PROBE_OUT": str(tmp_path), "HCCL_CONNECT_TIMEOUT": "600"},
        timeout=HANG_BOUND,
    )
    assert result.returncode == 0, result.stderr
    ranks = records(tmp_path)
    assert sorted(ranks) == [0, 1]
    for rank, record in ranks.items():
        env = record["env"]
        assert isinstance(env, dict)
        assert record["sum"] == 3.0  # 1 + 2 over gloo: both ranks met through MASTER_ADDR/PORT
        assert record["argv"] == ["--lr=0.1", "--data_url=/data/d"]  # verbatim
        assert record["cwd"] == str(tmp_path)
        assert env["RANK"] == env["RANK_ID"] == env["LOCAL_RANK"] == str(rank)
        assert env["DEVICE_ID"] == env["ASCEND_DEVICE_ID"] == str(rank)
        assert env["WORLD_SIZE"] == env["RANK_SIZE"] == env["LOCAL_WORLD_SIZE"] == "2"
        assert env["GROUP_RANK"] == env["NODE_RANK"] == "0"
        assert env["JOB_ID"] == "job-7"
        assert env["HCCL_CONNECT_TIMEOUT"] == "600"  # the user's value wins over our 1800
        assert env["ASCEND_PROCESS_LOG_PATH"] == str(logs / "ascend" / f"rank_{rank}")
        assert int(str(env["MASTER_PORT"])) > 0
        table = record["rank_table"]
        assert isinstance(table, dict)
        ips = [d["device_ip"] for d in table["server_list"][0]["device"]]
        assert ips == ["192.168.100.10", "192.168.100.11"]
        assert f"probe rank {rank} sum 3.0" in (logs / f"rank_{rank}.log").read_text()
        assert f"[rank {rank}]: probe rank {rank} sum 3.0" in result.stdout


def test_modelarts_form_with_ma_num_gpus(tmp_path: Path) -> None:
    job_dir = tmp_path / "user-job-dir"
    log_dir = tmp_path / "log"
    job_dir.mkdir()
    log_dir.mkdir()
    env = ascendify_env(
        {
            "PROBE_OUT": str(tmp_path),
            "MA_NUM_GPUS": "2",
            "MA_VJ_NAME": "ma-job-5f0c",
            "MA_JOB_DIR": str(job_dir),
            "MA_LOG_DIR": str(log_dir),
        }
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ascendify.davincirun",
            "python",
            PROBE,
            "--data_url=/d",
            "--train_url=/t",
            "--help",  # the command's own: options end where CMD starts
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_BOUND,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "platform modelarts (MA_VJ_NAME set)" in result.stderr
    assert "(modelarts: MA_NUM_GPUS)" in result.stderr
    ranks = records(tmp_path)
    assert sorted(ranks) == [0, 1]
    for record in ranks.values():
        assert record["cwd"] == str(job_dir)
        assert record["argv"] == ["--data_url=/d", "--train_url=/t", "--help"]
        assert record["sum"] == 3.0
        env_seen = record["env"]
        assert isinstance(env_seen, dict)
        assert env_seen["JOB_ID"] == "modelarts-job-5f0c"
        assert env_seen["RANK_SIZE"] == "2"
    assert sorted(p.name for p in log_dir.glob("rank_*.log")) == ["rank_0.log", "rank_1.log"]


def test_modelarts_form_without_a_command_is_a_usage_error() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ascendify.davincirun"],
        env=ascendify_env(),
        capture_output=True,
        text=True,
        timeout=HANG_BOUND,
        check=False,
    )
    assert result.returncode == 2
    assert "usage" in result.stderr


def launcher_pids_gone(out: Path) -> list[int]:
    pids = [int(pid) for f in out.glob("pids_*") for pid in f.read_text().split()]
    assert pids, "the hanging rank never started"
    return [
        pid
        for pid in pids
        if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    ]


def test_failing_rank_stops_the_hanging_one_and_is_named(run_cli: RunCli, tmp_path: Path) -> None:
    started = time.monotonic()
    result = run_cli(
        [
            "run",
            "--nproc-per-node",
            "3",
            "--log-dir",
            str(tmp_path / "logs"),
            "python",
            FAIL_OR_HANG,
        ],
        env={"PROBE_OUT": str(tmp_path), "FAIL_RANK": "1", "FAIL_AFTER": "1.0"},
        timeout=HANG_BOUND,
    )
    elapsed = time.monotonic() - started
    assert result.returncode == 7
    assert elapsed < 8, f"hanging ranks were not stopped quickly ({elapsed:.1f}s)"
    assert "rank 1 (node 0, local rank 1, device 1" in result.stderr
    assert "failed first at" in result.stderr
    assert "exit code 7" in result.stderr
    assert "[rank 1]: rank 1 is about to fail: boom-marker" in result.stdout
    # the console showed the rank's output: only the one-line cause names it again
    assert [
        line for line in result.stderr.splitlines() if "boom-marker" in line and "cause" not in line
    ] == []
    assert "error: ValueError: bad batch" in result.stderr  # from its error file
    summary = json.loads((tmp_path / "logs" / "run_summary.json").read_text())
    assert summary["state"] == "failed"
    assert summary["root_cause"]["rank"] == 1
    assert summary["exit_codes"]["1"] == 7
    assert "stopped 2 running rank(s)" in result.stderr
    assert len(list(tmp_path.glob("pids_*"))) == 2
    assert launcher_pids_gone(tmp_path) == []  # ranks and their children: no orphans


def test_rank_ignoring_sigterm_is_killed_after_the_grace_period(
    run_cli: RunCli, tmp_path: Path
) -> None:
    started = time.monotonic()
    result = run_cli(
        [
            "run",
            "--nproc-per-node",
            "2",
            "--grace-period",
            "1",
            "--log-dir",
            str(tmp_path / "l"),
            "python",
            FAIL_OR_HANG,
        ],
        env={
            "PROBE_OUT": str(tmp_path),
            "FAIL_RANK": "0",
            "FAIL_AFTER": "1.0",
            "IGNORE_SIGTERM": "1",
        },
        timeout=HANG_BOUND,
    )
    assert result.returncode == 7
    assert time.monotonic() - started < 8
    assert launcher_pids_gone(tmp_path) == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_to_the_launcher_stops_every_rank(tmp_path: Path, sig: signal.Signals) -> None:
    launcher = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ascendify",
            "run",
            "--nproc-per-node",
            "2",
            "--log-dir",
            str(tmp_path / "l"),
            "python",
            FAIL_OR_HANG,
        ],
        env=ascendify_env({"PROBE_OUT": str(tmp_path)}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + HANG_BOUND
        while len(list(tmp_path.glob("pids_*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        launcher.send_signal(sig)
        _out, err = launcher.communicate(timeout=HANG_BOUND)
    finally:
        launcher.kill()
        launcher.wait()
    assert launcher.returncode == 128 + sig
    assert f"stopped by {sig.name}; 2 running rank(s) stopped" in err
    assert launcher_pids_gone(tmp_path) == []


def test_console_filter_keeps_every_rank_in_its_log(run_cli: RunCli, tmp_path: Path) -> None:
    script = (
        "import os, sys; rank = os.environ['RANK']; print('out', rank); "
        "print('err', rank, file=sys.stderr)"
    )
    result = run_cli(
        [
            "run",
            "--nproc-per-node",
            "2",
            "--local-ranks-filter",
            "1",
            "--tee",
            "1",
            "--log-dir",
            str(tmp_path),
            "python",
            "-c",
            script,
        ],
        timeout=HANG_BOUND,
    )
    assert result.returncode == 0, result.stderr
    assert "[rank 1]: out 1" in result.stdout
    assert "[rank 0]" not in result.stdout
    assert "err 1" not in result.stdout + result.stderr  # --tee 1: stdout only on the console
    hidden_rank_log = (tmp_path / "rank_0.log").read_text()
    assert "out 0" in hidden_rank_log
    assert "err 0" in hidden_rank_log


def test_single_node_run_does_not_import_torch(tmp_path: Path) -> None:
    code = (
        "import sys\nfrom ascendify.cli import main\n"
        f"code = main(['run', '--nproc-per-node', '2', '--log-dir', {str(tmp_path)!r}, "
        "'python', '-c', 'pass'])\n"
        "print('exit', code, 'torch imported:', 'torch' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        env=ascendify_env(),
        capture_output=True,
        text=True,
        timeout=HANG_BOUND,
        check=False,
    )
    assert "exit 0 torch imported: False" in result.stdout, result.stderr


def test_dry_run_prints_the_plan_and_starts_nothing(run_cli: RunCli, tmp_path: Path) -> None:
    result = run_cli(
        [
            "run",
            "--dry-run",
            "--nproc-per-node",
            "2",
            "--log-dir",
            str(tmp_path / "logs"),
            "python",
            "x.py",
        ],
        env={"VC_TASK_INDEX": "0", "MA_NUM_HOSTS": "1"},
        timeout=HANG_BOUND,
    )
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)
    assert plan["platform"] == {"name": "modelarts", "reason": "MA_NUM_HOSTS set"}
    assert [w["env"]["RANK"] for w in plan["workers"]] == ["0", "1"]
    assert plan["workers"][0]["argv"] == ["python", "x.py"]
    assert not (tmp_path / "logs").exists()


def test_unknown_command_is_a_usage_error(run_cli: RunCli) -> None:
    result = run_cli(["run", "no-such-program-xyz"], timeout=HANG_BOUND)
    assert result.returncode == 2
    assert "command not found: 'no-such-program-xyz'" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--nproc-per-node", "0"], "at least 1 or 'auto'"),
        (["--nnodes", "4:1"], "--nnodes 4:1: MIN must be at least 1 and at most MAX"),
        (["--local-ranks-filter", "a"], "ranks like 0,1"),
        (["--module", "--no-python"], "exclude each other"),
    ],
)
def test_bad_flags_are_usage_errors(run_cli: RunCli, args: list[str], message: str) -> None:
    result = run_cli(["run", *args, "python", "-c", "pass"], timeout=HANG_BOUND)
    assert result.returncode == 2
    assert message in result.stderr


def test_rank_that_cannot_start_fails_the_job_by_name(run_cli: RunCli, tmp_path: Path) -> None:
    not_a_program = tmp_path / "not-a-program"
    not_a_program.write_text("plain text, no interpreter line\n")
    not_a_program.chmod(0o755)
    result = run_cli(
        ["run", "--nproc-per-node", "2", "--log-dir", str(tmp_path / "l"), str(not_a_program)]
    )
    assert result.returncode == 127
    assert "rank 0 (node 0, local rank 0, device 0, pid 0) failed first" in result.stderr
    assert "could not start" in result.stderr
    assert "Exec format error" in result.stderr


def test_logs_go_to_the_user_cache_not_into_the_project(run_cli: RunCli, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text("print('trained')\n")
    cache = tmp_path / "cache"
    result = run_cli(
        ["run", "--nproc-per-node", "1", "python", "train.py"],
        cwd=project,
        env={"XDG_CACHE_HOME": str(cache)},
        timeout=HANG_BOUND,
    )
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in project.iterdir()) == ["train.py"]
    (log_dir,) = (cache / "ascendify" / "logs").iterdir()
    assert f"logs in {log_dir}" in result.stderr
    assert "trained" in (log_dir / "rank_0.log").read_text()


@pytest.mark.parametrize("ranks", ["1", "64"])  # the plan fits the pipe buffer / it does not
def test_dry_run_into_a_closed_pipe_is_quiet(tmp_path: Path, ranks: str) -> None:
    reader, writer = os.pipe()
    os.close(reader)  # `| head` that has already gone
    try:
        done = subprocess.run(
            [sys.executable, "-m", "ascendify", "run", "--dry-run", "--nproc-per-node", ranks,
             "--log-dir", str(tmp_path), "python", "x.py"],
            env=ascendify_env(),
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=HANG_BOUND,
            check=False,
        )  # fmt: skip
    finally:
        os.close(writer)
    assert done.stderr == ""
    assert done.returncode == 141
