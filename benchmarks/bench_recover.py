"""Recovery: from a rank's death to the next attempt's first line, and the hang verdict's delay.

Restart: a job of trivial ranks (no torch) whose last rank prints "dying" and exits 1 in the first
attempt, with ``--max-restarts 1``, on 1 node x 2 ranks and on 2 nodes x 2 ranks (loopback
addresses). Measured from the moment the launcher's console shows "dying" to the first line of
the next attempt, as the console shows them; the baseline, from the same runs, is a cold start:
from starting the launcher to the first attempt's first line (a restart should cost less).

Hang: 2 ranks print three lines and then sleep, with ``--hang-timeout``; measured from the last
line on the console to the moment the ranks' stacks were written, minus the timeout (target:
< 1 s).

    python benchmarks/bench_recover.py [--repeat 3] [--hang-timeout 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
RANK_SCRIPT = """\
import os, sys, time
attempt, rank = int(os.environ["ASCENDIFY_RESTART_COUNT"]), int(os.environ["RANK"])
print(f"first line of attempt {attempt}", flush=True)
if attempt == 0:
    if rank == int(os.environ["WORLD_SIZE"]) - 1:
        time.sleep(1)
        print("dying", flush=True)
        os._exit(1)
    time.sleep(60)
"""
HANG_SCRIPT = """\
import time
for tick in range(3):
    print("tick", tick, flush=True)
    time.sleep(0.1)
time.sleep(60)
"""
ADDRESSES = ("127.0.0.1", "127.0.0.2")


def _env() -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path}


def _free_port() -> int:
    sys.path.insert(0, str(SRC))
    from ascendify.launch.ports import free_port

    return free_port()


class Console:
    """A launcher's console lines with the time each arrived."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        self.lines: list[tuple[float, str]] = []
        self.process = subprocess.Popen(
            argv, cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        self._reader = threading.Thread(target=self._read)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append((time.time(), line))

    def wait(self) -> None:
        self.process.wait(timeout=120)
        self._reader.join()

    def first(self, text: str) -> float:
        return next(stamp for stamp, line in self.lines if text in line)

    def last(self, text: str) -> float:
        return max(stamp for stamp, line in self.lines if text in line)


def _run_argv(logs: Path, script: Path, *flags: str) -> list[str]:
    return [
        sys.executable, "-m", "ascendify", "run", "--nproc-per-node", "2", "--log-dir", str(logs),
        "--grace-period", "2", *flags, sys.executable, str(script),
    ]  # fmt: skip


def restart_once(workdir: Path, script: Path, nodes: int) -> tuple[float, float]:
    """(cold start to first line, death to the next attempt's first line) in seconds."""
    port = str(_free_port())
    started = time.time()
    consoles = []
    for node in range(nodes):
        many = (
            ["--nnodes", str(nodes), "--node-rank", str(node), "--master-addr", ADDRESSES[0],
             "--master-port", port, "--local-addr", ADDRESSES[node]]
            if nodes > 1 else []
        )  # fmt: skip
        logs = Path(tempfile.mkdtemp(dir=workdir))
        consoles.append(Console(_run_argv(logs, script, "--max-restarts", "1", *many), workdir))
    for console in consoles:
        console.wait()
        if console.process.returncode != 0:
            raise RuntimeError(f"a launcher exited with {console.process.returncode}")
    lines = [entry for console in consoles for entry in console.lines]
    first = min(stamp for stamp, line in lines if "first line of attempt 0" in line)
    died = min(stamp for stamp, line in lines if "dying" in line)
    back = min(stamp for stamp, line in lines if "first line of attempt 1" in line)
    return first - started, back - died


def hang_once(workdir: Path, script: Path, timeout: float) -> float:
    """Seconds from the last line to the stacks being written, beyond ``timeout``."""
    logs = Path(tempfile.mkdtemp(dir=workdir))
    console = Console(_run_argv(logs, script, "--hang-timeout", str(timeout)), workdir)
    console.wait()
    stacks = list((logs / "stacks" / "attempt_0").glob("*.txt"))
    if len(stacks) != 2:
        raise RuntimeError(f"expected the stacks of 2 ranks, found {len(stacks)}")
    written = min(path.stat().st_mtime for path in stacks)
    return written - console.last("tick") - timeout


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--hang-timeout", type=float, default=2.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch)
        rank, hang = workdir / "rank.py", workdir / "hang.py"
        rank.write_text(RANK_SCRIPT)
        hang.write_text(HANG_SCRIPT)
        print(f"{args.repeat} runs each, medians")
        print(f"{'job':<18}{'cold start':>12}{'death -> next attempt':>24}{'ratio':>8}")
        for nodes in (1, 2):
            runs = [restart_once(workdir, rank, nodes) for _ in range(args.repeat)]
            cold = statistics.median(run[0] for run in runs)
            back = statistics.median(run[1] for run in runs)
            name = f"{nodes} node(s) x 2 ranks"
            print(f"{name:<18}{cold:>11.2f}s{back:>23.2f}s{back / cold:>7.2f}x")
        delays = [hang_once(workdir, hang, args.hang_timeout) for _ in range(args.repeat)]
        print(
            f"hang verdict and stacks, beyond the {args.hang_timeout:g}s timeout: "
            f"{statistics.median(delays):.2f}s (target < 1 s)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
