"""What static analysis costs over parsing alone, on a real tree (torch's own ``nn/modules`` by default).

The baseline is reading and ``ast.parse``-ing every Python file of the tree; the measured runs are
:func:`ascendify.analyze.static.analyze_path` on the same tree (read, parse, resolve names, classify, scan C++)
and :func:`ascendify.analyze.unsafe.analyze_with_migration`, what ``analyze -i DIR`` runs: the same
analysis riding on a preview of the migration, which finds the unsafe edits. All are medians of several runs
in this process, in one worker; the ratios are what matter.

Usage::

    PYTHONPATH=src python benchmarks/bench_analyze_static.py [--tree DIR] [--runs 5]
"""

from __future__ import annotations

import argparse
import ast
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from ascendify.analyze.static import analyze_path
from ascendify.analyze.unsafe import analyze_with_migration


def _median(action: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def _parse_all(files: list[Path]) -> None:
    for path in files:
        ast.parse(path.read_bytes())


def main() -> None:
    import torch.nn.modules

    default_tree = Path(torch.nn.modules.__file__).parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=default_tree)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    files = sorted(args.tree.rglob("*.py"))
    lines = sum(len(path.read_bytes().splitlines()) for path in files)
    parse = _median(lambda: _parse_all(files), args.runs)
    analyze = _median(lambda: analyze_path(args.tree), args.runs)
    with_migration = _median(lambda: analyze_with_migration(args.tree, None, jobs=1), args.runs)
    print(
        f"{len(files)} files, {lines} lines: parse only {parse:.3f} s, analyze {analyze:.3f} s "
        f"({lines / analyze:,.0f} lines/s), ratio {analyze / parse:.2f}; with the migration's "
        f"unsafe edits {with_migration:.3f} s, ratio {with_migration / parse:.2f} "
        f"({with_migration / analyze:.2f}x the analysis alone)"
    )


if __name__ == "__main__":
    main()
