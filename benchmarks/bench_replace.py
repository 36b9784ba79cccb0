"""What the exact replacements of ``ascendify migrate -r`` cost against the originals, on this CPU.

For each exact composite and a few sizes: the median time of the original and of the replacement in the
same run, best of several (the ratio is what matters), and how many aten operator calls each makes (forward only). On an
NPU every operator call is a kernel launch, so the call count says more about the device cost than the
CPU time does; fallbacks are not measured here: on the CPU they are the original.

Usage::

    PYTHONPATH=src python benchmarks/bench_replace.py [--runs 20]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from ascendify.analyze.tracer import OperatorRecorder
from ascendify.replace import library as L

Workload = tuple[str, Callable[[torch.Tensor], Any], Callable[[torch.Tensor], Any]]
WORKLOADS: list[Workload] = [
    ("linalg.inv", torch.linalg.inv, L.linalg_inv),
    ("linalg.det", torch.linalg.det, L.linalg_det),
    ("linalg.slogdet", torch.linalg.slogdet, L.linalg_slogdet),
    (
        "linalg.solve",
        lambda a: torch.linalg.solve(a, a[..., 0]),
        lambda a: L.linalg_solve(a, a[..., 0]),
    ),
    ("linalg.cholesky", torch.linalg.cholesky, L.linalg_cholesky),
    ("logcumsumexp", lambda a: torch.logcumsumexp(a, -1), lambda a: L.logcumsumexp(a, -1)),
]


def _operator_calls(action: Callable[[], object]) -> int:
    recorder = OperatorRecorder(Path(__file__).parent, max_ops=None)
    with recorder:
        action()
    return recorder.total


def _best(action: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return min(samples)  # the least disturbed run: the machine is shared


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    torch.manual_seed(0)
    print(f"{'api':16} {'shape':>12} {'original':>10} {'ours':>10} {'ratio':>6} {'ops':>9}")
    for name, original, ours in WORKLOADS:
        for shape in ((4, 4), (64, 4, 4), (32, 32), (128, 128)):
            a = torch.randn(*shape)
            matrix = a @ a.mT + shape[-1] * torch.eye(shape[-1])
            print(
                f"{name:16} {'x'.join(map(str, shape)):>12} {_compare(original, ours, matrix, args.runs)}"
            )


def _compare(
    original: Callable[[torch.Tensor], Any],
    ours: Callable[[torch.Tensor], Any],
    matrix: torch.Tensor,
    runs: int,
) -> str:
    theirs_s = _best(lambda: original(matrix), runs)
    ours_s = _best(lambda: ours(matrix), runs)
    ops = f"{_operator_calls(lambda: original(matrix))}/{_operator_calls(lambda: ours(matrix))}"
    return f"{theirs_s * 1e6:8.0f}us {ours_s * 1e6:8.0f}us {ours_s / theirs_s:6.1f} {ops:>9}"


if __name__ == "__main__":
    main()
