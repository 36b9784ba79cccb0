"""What the job runner's resource sampler costs: the CPU time of one sample of a job's process
trees (``--nodes`` nodes of ``--ranks`` rank processes each, each rank with ``--workers`` children,
as data loader workers), as a share of one core at the sampling interval. Target: < 1% of a core.

    PYTHONPATH=src python benchmarks/bench_resources.py [--nodes 2] [--ranks 8] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from ascendify.jobs.resources import INTERVAL, ResourceSampler, accelerator_reader  # noqa: E402

# A rank: RANK and LOCAL_RANK set, with children of its own; all sleep.
RANK = (
    "import subprocess, sys, time;"
    "kids = [subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])"
    " for _ in range(int(sys.argv[1]))]; time.sleep(600)"
)
NODE = (
    "import os, subprocess, sys, time;"
    "ranks = [subprocess.Popen([sys.executable, '-c', sys.argv[3], sys.argv[2]],"
    " env={**os.environ, 'RANK': str(r), 'LOCAL_RANK': str(r)}) for r in range(int(sys.argv[1]))];"
    "time.sleep(600)"
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--samples", type=int, default=30)
    args = parser.parse_args()
    nodes = [
        subprocess.Popen(
            [sys.executable, "-c", NODE, str(args.ranks), str(args.workers), RANK],
            start_new_session=True,
        )
        for _ in range(args.nodes)
    ]
    try:
        time.sleep(3)  # the trees are started
        accelerators, what = accelerator_reader()
        sampler = ResourceSampler(
            lambda: {n: node.pid for n, node in enumerate(nodes)}, accelerators
        )
        sampler.sample(time.time())  # the first reads each process's environ once
        costs = []
        for _ in range(args.samples):
            started = time.process_time()
            points = sampler.sample(time.time())
            costs.append(time.process_time() - started)
        cost = statistics.median(costs)
        processes = args.nodes * (1 + args.ranks * (1 + args.workers))
        print(
            f"sampler: {cost * 1000:.1f} ms of CPU a sample of {processes} processes "
            f"({len(points)} series; {what}); every {INTERVAL:g} s that is "
            f"{cost / INTERVAL * 100:.2f}% of a core (target < 1%: {cost / INTERVAL / 0.01:.2f}x)"
        )
    finally:
        for node in nodes:
            os.killpg(node.pid, 9)
            node.wait()


if __name__ == "__main__":
    main()
