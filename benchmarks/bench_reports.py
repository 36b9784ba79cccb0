"""Writing an XLSX report: ascendify's own writer against openpyxl, the way reports were written before.

Both write the same rows (a header and ``--rows`` rows of five cells: file, line, column, operation,
advice, as in an analysis report) into a fresh file, taking turns; each figure is the median of
``--repeat`` runs, and the ratio is openpyxl's time / ascendify's (above 1: ascendify is faster).
The cost of importing each writer, paid once per command, is measured in fresh interpreters.
openpyxl is imported here only, as the baseline.

    python benchmarks/bench_reports.py [--rows 200000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from openpyxl import Workbook
from openpyxl.styles import Font

from ascendify.tabular import Row, _storable, spreadsheet_safe, write_xlsx

HEADER = ("File", "Line", "Column", "Operation", "Advice")


def report_rows(count: int) -> list[Row]:
    return [
        (
            f"src/models/layer_{index % 997}/block.py",
            index % 5000 + 1,
            index % 80,
            ("torch.cuda.set_device", "torch.cuda.amp.autocast", "x.cuda()")[index % 3],
            "-use torch.npu" if index % 7 == 0 else "supported after migration",
        )
        for index in range(count)
    ]


def with_openpyxl(path: Path, header: Sequence[str], rows: list[Row], sheet: str) -> None:
    """The writer ascendify used before its own (bold header, frozen pane, same cell escaping)."""
    workbook = Workbook()
    table = workbook.active
    assert table is not None
    table.title = sheet
    table.append(list(header))
    for cell in table[1]:
        cell.font = Font(bold=True)
    for row in rows:
        table.append([_storable(spreadsheet_safe(value)) for value in row])
    table.freeze_panes = "A2"
    workbook.save(path)


def with_ascendify(path: Path, header: Sequence[str], rows: list[Row], sheet: str) -> None:
    write_xlsx(path, header, rows, sheet)


def seconds(write: Callable[[Path, Sequence[str], list[Row], str], None], rows: list[Row]) -> float:
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        write(Path(folder) / "report.xlsx", HEADER, rows, "unsupported")
        return time.perf_counter() - start


def import_seconds(module: str, repeat: int) -> float:
    """Median time of a fresh interpreter importing ``module``, less one importing nothing."""

    def run(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return time.perf_counter() - start

    bare = statistics.median(run("pass") for _ in range(repeat))
    return statistics.median(run(f"import {module}") for _ in range(repeat)) - bare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = report_rows(args.rows)
    old: list[float] = []
    new: list[float] = []
    for _ in range(args.repeat):  # turns, so that a slow moment of the machine hits both
        old.append(seconds(with_openpyxl, rows))
        new.append(seconds(with_ascendify, rows))
    old_s, new_s = statistics.median(old), statistics.median(new)
    print(f"{args.rows} rows x {len(HEADER)} cells, median of {args.repeat}")
    print(f"  openpyxl   {old_s:8.3f} s")
    print(f"  ascendify  {new_s:8.3f} s")
    print(f"  ratio      {old_s / new_s:8.1f}x")
    old_import = import_seconds("openpyxl", args.repeat)
    new_import = import_seconds("ascendify.tabular", args.repeat)
    print(f"import: openpyxl {old_import:.3f} s, ascendify.tabular {new_import:.3f} s")


if __name__ == "__main__":
    main()
