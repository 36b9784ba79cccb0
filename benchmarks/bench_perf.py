"""What ``ascendify perf`` costs on a large trace: a kineto trace of ``--mb`` MB (torch.profiler's
layout: one indented event after another, nested operators on the main thread, collectives on a
communication thread, steps as ProfilerStep#N), read by the streaming reader and split into steps
(``ascendify.perf.kineto.read_kineto``) vs. a plain read of the same bytes in 4 MB blocks (the
baseline). Targets (issue 47): at least 50 MB/s per core, and a peak memory that would stay under
300 MB for a 1 GB trace (the reader's process, Python and ascendify included).

Each side runs in a child process of its own, so its peak resident memory (``ru_maxrss``) is its
own; MB per CPU-second is the per-core figure (the reader is single-threaded). The medians of
``--repeat`` turns are printed with the load average before and after; the file is read once
before timing so both sides read from the page cache. ``--json-load`` adds ``json.load`` of the
whole file, for its memory.

    python benchmarks/bench_perf.py [--mb 200] [--repeat 3] [--json-load]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from pathlib import Path

from _child import child_figures, load_text

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
OPERATORS_PER_STEP = 400

CHILD = """\
import json, resource, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
path, mode = Path(sys.argv[2]), sys.argv[3]
started = time.perf_counter()
if mode == "stream":
    from ascendify.perf.kineto import read_kineto
    result = f"{len(read_kineto(path).steps)} steps"
elif mode == "json.load":
    with path.open("rb") as handle:
        result = f"{len(json.load(handle)['traceEvents'])} events"
else:
    lines = 0
    with path.open("rb") as handle:
        while block := handle.read(4 << 20):
            lines += block.count(b"\\n")
    result = f"{lines} lines"
elapsed = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"seconds": elapsed, "cpu": usage.ru_utime + usage.ru_stime,
                  "peak": usage.ru_maxrss * 1024, "result": result}))
"""


def _event(name: str, category: str, ts: float, duration: float, tid: int) -> str:
    event = {
        "ph": "X", "cat": category, "name": name, "pid": 4242, "tid": tid, "ts": round(ts, 3),
        "dur": round(duration, 3), "args": {"External id": int(ts) % 100_000, "Record function id": 0,
                                            "Sequence number": int(ts) % 977, "Fwd thread id": 0},
    }  # fmt: skip
    return json.dumps(event, indent=4)


def _step(number: int, start: float) -> tuple[list[str], float]:
    """One step: nested operators on the main thread, then an all-reduce on gloo's thread."""
    events, at = [], start + 5.0
    for index in range(OPERATORS_PER_STEP // 2):
        events.append(_event("aten::linear", "cpu_op", at, 8.0, 4242))
        events.append(_event("aten::addmm", "cpu_op", at + 1.0, 6.0, 4242))
        at += 9.0 + index % 3
    events.append(_event("gloo:all_reduce", "user_annotation", at, 400.0, 4250))
    end = at + 410.0
    events.insert(0, _event(f"ProfilerStep#{number}", "user_annotation", start, end - start, 4242))
    return events, end


def make_trace(path: Path, megabytes: int) -> int:
    wanted = megabytes * 1_000_000
    with path.open("w", encoding="utf-8") as out:
        out.write('{\n  "schemaVersion": 1,\n  "distributedInfo": {"backend": "gloo", "rank": 0, '
                  '"world_size": 2},\n  "traceEvents": [\n')  # fmt: skip
        number, at, first = 0, 1_700_000_000_000.0, True
        while out.tell() < wanted:
            events, at = _step(number, at)
            for event in events:
                out.write(("" if first else ",\n") + event)
                first = False
            number += 1
        out.write('\n  ],\n  "displayTimeUnit": "ms"\n}\n')
        return out.tell()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json-load", action="store_true", help="also time json.load")
    args = parser.parse_args()
    modes = ["read", "stream"] + (["json.load"] if args.json_load else [])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rank0.pt.trace.json"
        size = make_trace(path, args.mb)
        child_figures(CHILD, str(SRC), str(path), "read")  # warm the page cache
        load_before = os.getloadavg()
        runs: dict[str, list[dict[str, float | str]]] = {mode: [] for mode in modes}
        for _ in range(args.repeat):
            for mode, results in runs.items():
                results.append(child_figures(CHILD, str(SRC), str(path), mode))
    load_after = os.getloadavg()
    mb = size / 1e6
    print(
        f"{mb:.0f} MB kineto trace, medians of {args.repeat}; load average (1, 5, 15 min) "
        f"{load_text(load_before)} before, {load_text(load_after)} after"
    )
    for mode, results in runs.items():
        seconds = statistics.median(float(r["seconds"]) for r in results)
        cpu = statistics.median(float(r["cpu"]) for r in results)
        peak = statistics.median(float(r["peak"]) for r in results) / 1e6
        print(
            f"{mode:9s} {mb / seconds:8.1f} MB/s  {mb / cpu:8.1f} MB per CPU-s  {seconds:6.2f} s  "
            f"peak {peak:7.1f} MB  ({results[0]['result']})"
        )
    base = statistics.median(float(r["seconds"]) for r in runs["read"])
    stream = statistics.median(float(r["seconds"]) for r in runs["stream"])
    print(f"stream / plain read time: {stream / base:.1f}")


if __name__ == "__main__":
    main()
