"""What ``ascendify analyze --trace`` costs: a small training step with and without the operator recorder.

Two figures, each a ratio of medians measured side by side in this run:

* per step, in one process: the same step plain and under :class:`OperatorRecorder`;
* end to end: ``python train.py`` against ``python -m ascendify.analyze.tracer ... -- train.py``
  (interpreter start, torch import, the steps, writing the trace).

Usage::

    PYTHONPATH=src python benchmarks/bench_trace.py [--steps 20] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

SCRIPT = """\
import sys

import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU(), nn.Flatten(), nn.Linear(16 * 30 * 30, 10))
optimizer = torch.optim.Adam(model.parameters())
images, labels = torch.randn(32, 3, 32, 32), torch.randint(0, 10, (32,))


def step():
    loss = nn.functional.cross_entropy(model(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


if __name__ == "__main__":
    for _ in range(int(sys.argv[1])):
        step()
"""


def _median_seconds(action: Callable[[], object], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def per_step(script: Path, steps: int) -> tuple[float, float]:
    import runpy

    from ascendify.analyze.tracer import OperatorRecorder, TraceWriter

    namespace = runpy.run_path(str(script))  # defines step() without running the loop
    step = namespace["step"]
    step()  # warm up
    plain = _median_seconds(step, steps)
    writer = TraceWriter(script.parent / "trace.jsonl")  # written as it grows, as in a real trace
    with OperatorRecorder(script.parent, None, writer):
        traced = _median_seconds(step, steps)
    writer.close()
    return plain, traced


def end_to_end(script: Path, steps: int, runs: int) -> tuple[float, float]:
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[1] / "src")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    trace_out = script.parent / "trace.json"
    plain_cmd = [sys.executable, str(script), str(steps)]
    traced_cmd = [
        sys.executable, "-m", "ascendify.analyze.tracer", "--trace-out", str(trace_out), "--",
        str(script), str(steps),
    ]  # fmt: skip

    def run(command: list[str]) -> None:
        subprocess.run(command, env=env, check=True, timeout=600)

    plain = _median_seconds(lambda: run(plain_cmd), runs)
    traced = _median_seconds(lambda: run(traced_cmd), runs)
    return plain, traced


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        script = Path(scratch) / "train.py"
        script.write_text(textwrap.dedent(SCRIPT), encoding="utf-8")
        plain, traced = per_step(script, args.steps)
        print(
            f"per step (median of {args.steps}): plain {plain * 1e3:.2f} ms, traced "
            f"{traced * 1e3:.2f} ms, ratio {traced / plain:.2f}"
        )
        plain, traced = end_to_end(script, args.steps, args.runs)
        print(
            f"end to end, {args.steps} steps (median of {args.runs} runs): plain {plain:.2f} s, "
            f"traced {traced:.2f} s, ratio {traced / plain:.2f}"
        )


if __name__ == "__main__":
    main()
