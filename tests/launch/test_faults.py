"""Faults of ranks and of the node under them: the launcher ends with a named cause, writes
``run_summary.json`` and leaves nothing running (real ranks, a real full disk, real signals)."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from ascendify.launch.agent import signal_name
from tests.conftest import RunCli, tmpfs
from tests.storage.conftest import SilentServer

pytestmark = pytest.mark.slow  # every test here starts processes


def _run(run_cli: RunCli, tmp_path: Path, script: str, *options: str) -> tuple[int, str, dict]:
    """Run ``script`` as one rank; its exit code, stderr and run summary."""
    boot = tmp_path / "rank.py"
    boot.write_text(script)
    logs = tmp_path / "logs"
    result = run_cli(
        ["run", "--log-dir", str(logs), "--grace-period", "2", *options, "python", str(boot)],
        cwd=tmp_path, timeout=60,
    )  # fmt: skip
    summary = json.loads((logs / "run_summary.json").read_text())
    return result.returncode, result.stderr, summary


def _gone(pid: int, seconds: float = 5) -> bool:
    deadline = time.monotonic() + seconds
    while True:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def test_a_rank_killed_by_a_real_time_signal_is_named(run_cli: RunCli, tmp_path: Path) -> None:
    script = "import os\nopen('model.pt', 'w').write('w')\nos.kill(os.getpid(), 40)\n"
    code, stderr, summary = _run(run_cli, tmp_path, script)
    assert code == 128 + 40, stderr
    assert "rank 0 (node 0, local rank 0, device 0" in stderr
    assert "killed by signal SIGRTMIN+6" in stderr
    assert summary["ranks"]["0"]["signal"] == "SIGRTMIN+6" == signal_name(40)
    assert summary["root_cause"]["exit_code"] == -40
    assert (tmp_path / "model.pt").read_text() == "w"


@pytest.mark.parametrize(
    ("body", "reported"),
    [
        ('"[" * 200_000 + "]" * 200_000', "nested too deeply"),
        ('\'{"message": "\' + "x" * (3 << 20) + \'"}\'', "larger than 1 MiB"),
    ],
    ids=["deep", "huge"],
)
def test_an_error_file_beyond_the_limits_is_named_not_parsed(
    run_cli: RunCli, tmp_path: Path, body: str, reported: str
) -> None:
    script = (
        "import os, sys\n"
        f"open(os.environ['TORCHELASTIC_ERROR_FILE'], 'w').write({body})\n"
        "open('model.pt', 'w').write('w')\n"
        "sys.exit(1)\n"
    )
    code, stderr, summary = _run(run_cli, tmp_path, script)
    assert code == 1, stderr
    assert "rank 0 (node 0" in stderr
    assert reported in summary["root_cause"]["error"]
    assert len(summary["root_cause"]["error"]) < 1000
    assert (tmp_path / "model.pt").read_text() == "w"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs: a disk that fills."""
    with tmpfs(tmp_path / "disk", "1m") as disk:
        yield disk


# Prints 3 MiB (three times the disk), then writes the model: it finishes only if its pipe drains.
NOISY_RANK = """\
import os, sys
line = "x" * 1023 + "\\n"
for _ in range(3 * 1024):
    sys.stdout.write(line)
sys.stdout.flush()
open(os.path.join(os.environ["OUT"], "model.pt"), "w").write("weights")
print("saved", flush=True)
"""


def test_a_full_log_disk_fails_the_job_by_name_and_the_rank_finishes(
    run_cli: RunCli, tmp_path: Path, small_disk: Path
) -> None:
    boot = tmp_path / "rank.py"
    boot.write_text(NOISY_RANK)
    result = run_cli(
        ["run", "--log-dir", str(small_disk), "--tee", "0", "python", str(boot)],
        cwd=tmp_path, env={"OUT": str(tmp_path)}, timeout=60,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert f"node 0 failed: disk full: {small_disk / 'rank_0.log'}" in result.stderr
    assert "Traceback" not in result.stderr
    assert (tmp_path / "model.pt").read_text() == "weights"
    summary = json.loads((small_disk / "run_summary.json").read_text())
    assert summary["state"] == "failed"
    assert summary["ranks"]["0"]["exit_code"] == 0
    assert summary["root_cause"]["error"] == f"disk full: {small_disk / 'rank_0.log'}"


DAEMON_RANK = """\
import os, subprocess, sys
sleeper = [sys.executable, "-c", "import time; time.sleep(120)"]
# A daemon: double fork, new session, an empty environment (no job marker), the middle gone at once.
middle = subprocess.run(
    [sys.executable, "-c", "import subprocess, sys; "
     f"p = subprocess.Popen({sleeper!r}, start_new_session=True, env={{}}, "
     "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); print(p.pid)"],
    capture_output=True, text=True, check=True, env={},
)
open("daemon.pid", "w").write(middle.stdout)
"""


def test_a_daemon_that_scrubbed_its_environment_does_not_outlive_the_launcher(
    run_cli: RunCli, tmp_path: Path
) -> None:
    code, stderr, summary = _run(run_cli, tmp_path, DAEMON_RANK)
    daemon = int((tmp_path / "daemon.pid").read_text())
    try:
        assert code == 0, stderr
        assert summary["state"] == "succeeded"
        assert _gone(daemon), "the daemon outlived the launcher"
    finally:
        with contextlib.suppress(psutil.Error):
            psutil.Process(daemon).kill()  # a failing test must not leave it behind


def test_join_timeout_holds_when_the_master_port_belongs_to_something_else(
    run_cli: RunCli, tmp_path: Path
) -> None:
    squatter = SilentServer()  # accepts the connection, never answers as a rendezvous store
    try:
        started = time.monotonic()
        result = run_cli(
            ["run", "--nnodes", "2", "--node-rank", "1", "--master-addr", "127.0.0.1",
             "--master-port", str(squatter.port), "--join-timeout", "3",
             "--log-dir", str(tmp_path / "logs"), "python", "-c", "open('ran', 'w')"],
            cwd=tmp_path, timeout=60,
        )  # fmt: skip
        elapsed = time.monotonic() - started
    finally:
        squatter.close()
    assert result.returncode == 2, result.stderr
    assert "accepts connections but gave no rendezvous answer within 3s" in result.stderr
    assert elapsed < 3 + 10  # the timeout, and torch's import before it
    assert not (tmp_path / "ran").exists()
