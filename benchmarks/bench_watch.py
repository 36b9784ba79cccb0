"""What the metric reader costs a rank: a rank printing 10,000 metric lines a second, with the job
runner's reader tailing its log vs. without it (target: the rank takes < 2% longer).

Each turn runs ``ascendify run`` of one rank that prints ``step N | loss X | lr Y | Z samples/s``
(every line holds metrics: the worst case) at 10,000 lines/s for a few seconds, once bare and once
while a :class:`~ascendify.jobs.tail.MetricsTail` tails the rank's log in a thread of this process,
as the job runner does. The rank reports how long its printing took; the ratio is taken per turn
and the median reported, with the reader's own CPU time per second of the rank's output.

    python benchmarks/bench_watch.py [--repeat 5] [--seconds 3] [--rate 10000]
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

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
RANK_SCRIPT = """\
import sys, time
rate, seconds = int(sys.argv[1]), float(sys.argv[2])
total = int(rate * seconds)
started = time.perf_counter()
for n in range(total):
    print(f"step {n} | loss {1.0 / (n + 1):.6f} | lr 1.0e-04 | {1500 + n % 7:.1f} samples/s", flush=True)
    if n % 100 == 99:  # keep to the rate: 100 lines, then wait for their time slot
        late = started + (n + 1) / rate - time.perf_counter()
        if late > 0:
            time.sleep(late)
elapsed = time.perf_counter() - started
with open(sys.argv[3], "w") as out:
    out.write(repr(elapsed))
"""


def _run_rank(work: Path, name: str, rate: int, seconds: float, read: bool) -> tuple[float, float]:
    """(the rank's printing time, the reader's CPU seconds) of one run."""
    sys.path.insert(0, str(SRC))
    from ascendify.jobs.metrics import MetricParser
    from ascendify.jobs.tail import MetricsTail

    logs = work / name
    result = work / f"{name}.elapsed"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    command = [sys.executable, "-m", "ascendify", "run", "--nproc-per-node", "1",
               "--log-dir", str(logs), sys.executable, str(work / "rank.py"), str(rate),
               str(seconds), str(result)]  # fmt: skip
    stop = threading.Event()
    reader_cpu = [0.0]

    def read_metrics() -> None:
        tail = MetricsTail([(0, logs / "rank_0.log")], work / f"{name}.tsv", MetricParser())
        tail.run(stop)
        reader_cpu[0] = time.thread_time()

    reader = threading.Thread(target=read_metrics)
    if read:
        reader.start()
    with (work / f"{name}.console").open("wb") as console:  # as a job's worker log
        subprocess.run(command, env=env, check=True, stdout=console, stderr=console, timeout=300)
    stop.set()
    if read:
        reader.join()
        lines = (logs / "rank_0.log").read_text().count("\n")
        points = (work / f"{name}.tsv").read_text().count("\n")
        assert points == 3 * lines, (points, lines)  # every line: loss, lr and samples/s
    return float(result.read_text()), reader_cpu[0]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rate", type=int, default=10_000, help="lines per second")
    args = parser.parse_args()
    ratios, bare, read, cpu = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="bench-watch-") as scratch:
        work = Path(scratch)
        (work / "rank.py").write_text(RANK_SCRIPT)
        for turn in range(args.repeat):
            without, _ = _run_rank(work, f"bare-{turn}", args.rate, args.seconds, read=False)
            with_reader, reader_cpu = _run_rank(
                work, f"read-{turn}", args.rate, args.seconds, read=True
            )
            bare.append(without)
            read.append(with_reader)
            ratios.append(with_reader / without)
            cpu.append(reader_cpu / with_reader)
    print(
        f"rank printing {args.rate} metric lines/s for {args.seconds:g} s "
        f"(median of {args.repeat}):"
    )
    print(f"  without the reader: {statistics.median(bare):.3f} s")
    print(f"  with the reader:    {statistics.median(read):.3f} s")
    print(f"  ratio: {statistics.median(ratios):.3f}x (target < 1.02x)")
    print(
        f"  the reader's own CPU: {100 * statistics.median(cpu):.1f}% of one core "
        "(in the job runner, not in the rank)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
