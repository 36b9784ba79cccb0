"""Launcher start-up: time from starting the launcher until every rank runs, vs torchrun.

Both launchers start the same trivial script with N ranks on this machine, alternately, several
times in one run; each rank writes the time its first line ran. Reported: medians of
"all ranks running" (start -> last rank's first line) and of the whole run, and our ratio to
torchrun (target: <= 1.0x).

    python benchmarks/bench_launch.py [--nproc 2] [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
RANK_SCRIPT = """\
import time
started = time.time()
import os, sys
with open(os.path.join(sys.argv[1], os.environ["RANK"]), "w") as marker:
    marker.write(repr(started))
"""


def launch_once(command: list[str], nproc: int, workdir: Path) -> tuple[float, float]:
    """(seconds until every rank ran its first line, seconds for the whole run)."""
    markers = Path(tempfile.mkdtemp(dir=workdir))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])),
    }
    started = time.time()
    subprocess.run(
        [*command, str(markers)], env=env, cwd=workdir, check=True, capture_output=True, timeout=120
    )
    finished = time.time()
    times = [float(path.read_text()) for path in markers.iterdir()]
    if len(times) != nproc:
        raise RuntimeError(f"{command[:4]} started {len(times)} of {nproc} ranks")
    return max(times) - started, finished - started


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nproc", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch)
        script = workdir / "rank.py"
        script.write_text(RANK_SCRIPT)
        n = str(args.nproc)
        commands = {
            "ascendify run": [
                sys.executable,
                "-m",
                "ascendify",
                "run",
                "--nproc-per-node",
                n,
                "--log-dir",
                str(workdir / "logs"),
                "python",
                str(script),
            ],
            "torchrun": [
                sys.executable,
                "-m",
                "torch.distributed.run",
                "--standalone",
                "--nproc-per-node",
                n,
                str(script),
            ],
        }
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.repeat):  # alternate so that machine noise hits both alike
            for name, command in commands.items():
                results[name].append(launch_once(command, args.nproc, workdir))
    medians = {
        name: (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
        for name, runs in results.items()
    }
    print(f"{args.nproc} ranks, {args.repeat} runs each, medians")
    print(f"{'launcher':<16}{'all ranks running':>20}{'whole run':>12}")
    for name, (running, whole) in medians.items():
        print(f"{name:<16}{running:>19.3f}s{whole:>11.3f}s")
    ours, theirs = medians["ascendify run"], medians["torchrun"]
    print(
        f"ratio ascendify/torchrun: all ranks running {ours[0] / theirs[0]:.2f}x "
        f"(target <= 1.0x), whole run {ours[1] / theirs[1]:.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
