"""The metric reader's throughput per rank, and what the job page's metrics API sends.

1. Reader: a rank log of ``--lines`` metric lines (``step N | loss X | lr Y | Z samples/s``: every
   line holds metrics, the worst case) read by :class:`~ascendify.jobs.tail.MetricsTail` in one
   poll, as the job runner reads a rank that printed them in a burst; in lines per second, against
   a bare read of the same file split into lines (the baseline, measured in the same turn), with
   and without a user's ``--metric`` pattern (RE2). Target: 100,000 lines/s per rank.
2. API: a job of ``--points`` loss points; the bytes of one ``GET /api/jobs/<id>/metrics`` (what the
   page asks every 2 s) against the full series as JSON (what it was sent before), and the time of
   the first request and of the next ones (which read on from it), over a real socket.

    PYTHONPATH=src python benchmarks/bench_metrics.py [--repeat 3] [--lines 300000] [--points 1000000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from ascendify.jobs.layout import JobLayout  # noqa: E402
from ascendify.jobs.metrics import MetricParser, Point, append_points, read_series  # noqa: E402
from ascendify.jobs.store import JobStore  # noqa: E402
from ascendify.jobs.tail import MetricsTail  # noqa: E402

USER = {"acc": r"acc=([0-9.]+)"}


def _log(path: Path, lines: int) -> None:
    with path.open("w") as out:
        for n in range(lines):
            out.write(
                f"step {n} | loss {1.0 / (n + 1):.6f} | lr 1.0e-04 | {1500 + n % 7}.0 samples/s"
            )
            out.write(f" acc={n % 100 / 100}\n")


def _reader_turn(work: Path, log: Path, user: bool) -> tuple[float, float]:
    """(seconds of the reader, seconds of the bare split) for one read of ``log``."""
    started = time.perf_counter()
    lines = log.read_bytes().splitlines()
    bare = time.perf_counter() - started
    out = work / "metrics.tsv"
    out.unlink(missing_ok=True)
    parser = MetricParser(USER.items() if user else ())
    started = time.perf_counter()
    added = MetricsTail([(0, log)], out, parser).poll(final=True)
    seconds = time.perf_counter() - started
    assert added == len(lines) * 4, added  # loss, lr, samples/s, acc (built-in or the user's)
    return seconds, bare


def bench_reader(work: Path, lines: int, repeat: int) -> None:
    log = work / "rank_0.log"
    _log(log, lines)
    for user in (False, True):
        turns = [_reader_turn(work, log, user) for _ in range(repeat)]
        reader = statistics.median(seconds for seconds, _ in turns)
        ratio = statistics.median(seconds / bare for seconds, bare in turns)
        what = "with a --metric pattern (RE2)" if user else "built-in rules only"
        print(
            f"reader, {what}: {lines / reader:,.0f} lines/s per rank "
            f"({lines:,} lines in {reader:.2f} s; {ratio:.0f}x a bare split of the lines; "
            f"target 100,000 lines/s: {lines / reader / 100_000:.2f}x)"
        )


def bench_api(work: Path, points: int, repeat: int) -> None:
    from ascendify.web import bind

    store = JobStore(work / "store")
    job = store.create({"name": "long", "engine": "local", "nodes": 1, "cards": 1})
    layout = JobLayout(store.job_dir(job.id), job.id)
    layout.root.mkdir(parents=True)
    append_points(layout.metrics, (Point(0, "loss", n, 5.0 / (1 + n), 1.0) for n in range(points)))
    full = len(json.dumps({"job": job.id, "series": [s.to_json(False) for s in
                                                      read_series(layout.metrics)]}))  # fmt: skip
    pages = bind(store, host="127.0.0.1", port=0, allow_actions=False)
    threading.Thread(target=pages.server.serve_forever, daemon=True).start()
    try:
        sizes, times = [], []
        for _ in range(repeat + 1):
            started = time.perf_counter()
            with urllib.request.urlopen(pages.base + f"api/jobs/{job.id}/metrics") as answer:
                sizes.append(len(answer.read()))
            times.append(time.perf_counter() - started)
    finally:
        pages.server.shutdown()
    size = statistics.median(sizes)
    print(
        f"metrics API, a job of {points:,} points: {size / 1000:,.0f} KB a request vs "
        f"{full / 1e6:,.1f} MB of the full series ({full / size:,.0f}x less); the first request "
        f"{times[0]:.2f} s, the next ones (read on from it) {statistics.median(times[1:]):.2f} s"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--lines", type=int, default=300_000)
    parser.add_argument("--points", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-metrics-") as scratch:
        bench_reader(Path(scratch), args.lines, args.repeat)
        bench_api(Path(scratch), args.points, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
