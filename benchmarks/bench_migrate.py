"""Benchmark: migrate the installed torch package's own sources against merely parsing them.

The baseline is the floor any Python-aware tool pays: read every file and ``ast.parse`` it, in one
process. Measured against it, on a copy of torch's ``.py`` files: the whole ``ascendify migrate``
command as a user runs it (a fresh interpreter, the analysis reports included, the default ``-j``),
the same with ``--target portable``, and in this process with ``-j 1`` the migration alone (the
engine's own cost), the migration to the portable target and the static analysis (``analyze``),
which stand on the same source layer. Figures are medians; CPU time counts every worker process.
Then one ``-j 1`` run of each of the three is timed phase by phase (the project pass, reading, the
pre-scan, the parse, the pass over the statements, the rules, the analysis, writing), each phase's
own time, as a share of the parse-only baseline.

    PYTHONPATH=src python benchmarks/bench_migrate.py [--runs 3] [--jobs N] [--no-phases] [--tree DIR]

Targets: the command as a user runs it at most 0.8x the parse-only wall time and 1.5x its CPU time,
with ``--target portable`` within 1.2x of it. The ``-j 1`` rows show the engine's own cost in one
process; they have no target.

Figures of 2026-12-02 on a 2-core machine shared with other work (docs/development.md has more),
``--runs 3 --no-phases`` at load 1.7 (the parse 21.3 s of wall time): the command (-j 2, reports
included) 0.73x the parse's wall time and 1.39x its CPU, 0.66x with its result in memory; with
--target portable 0.81x and 1.52x (1.11x the command); -j 1 in one process, the migration 1.27x,
the portable target 1.37x, analyze 0.69x. The morning of that day, before the work of issue 38's
last stage: the command 0.98x and 1.16x in two runs, the portable target 1.21x and 1.29x. At load
8-14 the ratios swing by half from turn to turn: measure when the load average is low, and quote it.

The command writes a copy of every file; the baseline writes nothing. What creating a file costs is
the file system's, and it varies widely: on a virtual machine's ext4 disk about 1 ms of kernel CPU
per file, on tmpfs a few microseconds. So the command is measured twice, its result in the
temporary folder (on disk here) and in memory (``/dev/shm``, where there is one), and the bare
creation of as many empty files on the disk is shown beside them: the first row minus the last is
what ascendify itself costs.

``--small`` measures the other end instead: a generated project of 50 training scripts, migrated
with its analysis reports and the default ``-j``, through the command line (a fresh interpreter,
imports included) and through the library. Target: under 1 s of wall time.
"""

from __future__ import annotations

import argparse
import ast
import compileall
import contextlib
import importlib.util
import io
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rich.console import Console

import ascendify
import ascendify.analyze.static
import ascendify.migrate._engine
import ascendify.migrate._tree
import ascendify.source.parsed
from ascendify._parallel import default_jobs
from ascendify.analyze.static import StaticAnalysis, analyze_path
from ascendify.migrate import (
    Options,
    Settings,
    migrate_tree,
    plan_tree,
    prepare_output,
    run_migration,
)
from ascendify.migrate._modes import Modes, Target
from ascendify.source import Tokens

PORTABLE = Settings(modes=Modes(target=Target.PORTABLE))

# What is measured: given an empty output folder (unused by some), do the work once.
Action = Callable[[Path], None]
MEMORY = Path("/dev/shm")  # a tmpfs on Linux: files created in memory

SMALL_FILES = 50
_SCRIPT = """import torch
import torch.nn as nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class Net{index}(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc(x)


def train():
    torch.cuda.set_device(0)
    model = Net{index}().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(10):
        x = torch.randn(4, 8).to(DEVICE)
        loss = model(x).sum()
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
    return loss.item()
"""


def torch_sources() -> Path:
    """torch's package directory, found without importing torch."""
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        raise SystemExit("torch is not installed")
    return Path(spec.origin).parent


def copy_python_tree(package: Path, destination: Path) -> tuple[int, int]:
    """Copy every .py file (keeping the layout); return (files, lines)."""
    files = lines = 0
    for path in package.rglob("*.py"):
        if not path.is_file():
            continue
        target = destination / path.relative_to(package)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        files += 1
        lines += path.read_bytes().count(b"\n")
    return files, lines


def parse_only(tree: Path) -> Action:
    def run(_: Path) -> None:
        for path in sorted(tree.rglob("*.py")):
            with contextlib.suppress(SyntaxError):  # torch ships a few deliberately broken files
                ast.parse(path.read_bytes())

    return run


def migrate(tree: Path, jobs: int, settings: Settings | None = None) -> Action:
    def run(out: Path) -> None:
        options = Options(source=tree, output=out, settings=settings or Settings(), jobs=jobs)
        result_dir = prepare_output(options)
        migrate_tree(options, result_dir, plan_tree(tree))

    return run


def analyze(tree: Path, jobs: int) -> Action:
    """``ascendify analyze -i tree`` without writing its reports: the static analysis itself."""

    def run(_: Path) -> None:
        analyze_path(tree, jobs=jobs)

    return run


def create_files(count: int) -> Action:
    """Create ``count`` empty files in folders of 20, as a result tree has them: what the file
    system charges for the files alone."""

    def run(out: Path) -> None:
        for index in range(count):
            folder = out / f"d{index // 20}"
            if index % 20 == 0:
                folder.mkdir(parents=True)
            os.close(os.open(folder / f"f{index}.py", os.O_WRONLY | os.O_CREAT | os.O_EXCL))

    return run


def small_project(destination: Path) -> int:
    """SMALL_FILES GPU training scripts in five packages; returns the number of lines."""
    lines = 0
    for index in range(SMALL_FILES):
        package = destination / f"pkg{index % 5}"
        package.mkdir(parents=True, exist_ok=True)
        text = _SCRIPT.format(index=index)
        (package / f"train{index}.py").write_text(text)
        lines += text.count("\n")
    return lines


def migrate_command(tree: Path, jobs: int | None = None, *options: str) -> Action:
    """``ascendify migrate -i tree -o OUT [options]`` in a fresh interpreter (default: the
    default -j)."""

    def run(out: Path) -> None:
        command = [sys.executable, "-m", "ascendify", "migrate", "-i", str(tree), "-o", str(out)]
        command += options
        if jobs is not None:
            command += ["-j", str(jobs)]
        subprocess.run(command, check=True, capture_output=True)

    return run


def migrate_with_reports(tree: Path, jobs: int | None = None) -> Action:
    """What the command runs, called in this process: migration, reports and analysis."""

    def run(out: Path) -> None:
        settings = Settings()
        analysis = StaticAnalysis(settings.torch_npu_version)  # as the command adds it
        options = Options(
            source=tree,
            output=out,
            settings=settings,
            jobs=jobs or default_jobs(),
            companion=analysis,
        )
        quiet = Console(file=io.StringIO())
        run_migration(options, quiet, quiet)

    return run


class Phases:
    """Wall time by phase of work done in this process: functions of the library are wrapped for
    the duration, each charging its own time (less that of wrapped functions it calls) to its
    phase; the rest is "other"."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._stack = ["other"]
        self._since = 0.0

    def _charge(self) -> None:
        now = time.perf_counter()
        self.seconds[self._stack[-1]] += now - self._since
        self._since = now

    @contextlib.contextmanager
    def timing(self, points: list[tuple[Any, str, str]]) -> Iterator[None]:
        """Time ``(owner, attribute, phase)``: the function ``owner.attribute`` counts as phase."""
        originals = [(owner, name, getattr(owner, name)) for owner, name, _ in points]
        for (owner, name, original), (_, _, phase) in zip(originals, points, strict=True):
            setattr(owner, name, self._timed(original, phase))
        self._since = time.perf_counter()
        try:
            yield
        finally:
            self._charge()
            for owner, name, original in originals:
                setattr(owner, name, original)

    def _timed(self, function: Callable[..., Any], phase: str) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self._charge()
            self._stack.append(phase)
            try:
                return function(*args, **kwargs)
            finally:
                self._charge()
                self._stack.pop()

        return timed


_TREE, _ENGINE, _PARSED = (
    ascendify.migrate._tree,
    ascendify.migrate._engine,
    ascendify.source.parsed,
)
_STATIC = ascendify.analyze.static
# Where each phase's work is done, as the modules look the functions up when they call them.
PHASE_POINTS: list[tuple[Any, str, str]] = [
    (_TREE, "project_names", "project pass (what modules export)"),
    (_TREE, "read_source", "read"),
    (_STATIC, "read_source", "read"),
    (Tokens, "found_in", "pre-scan (trigger tokens)"),
    (_PARSED, "parse_source", "parse (decode, ast.parse)"),
    (_PARSED, "resolve_imports", "pass over the statements (names)"),
    (_ENGINE, "_migrate_module", "rules (walk, checkers, finishers, edits)"),
    (_STATIC, "_findings", "analysis (walk, findings)"),
    (_STATIC, "scan_cpp", "analysis (walk, findings)"),
    (_TREE, "write_bytes", "write"),
    (_TREE, "write_copy", "write"),
    (_TREE, "copy_file", "write"),
]


def phase_times(tree: Path, parse_seconds: float) -> None:
    """One -j 1 run of the command's migration (with its analysis and reports), of the portable
    target and of the static analysis, timed phase by phase."""
    runs = {
        "migrate (analysis, reports)": migrate_with_reports(tree, jobs=1),
        "migrate --target portable": migrate(tree, 1, PORTABLE),
        "analyze (static)": analyze(tree, 1),
    }
    measured = {}
    for label, action in runs.items():
        phases = Phases()
        with phases.timing(PHASE_POINTS):
            median_seconds(action, 1)
        measured[label] = phases.seconds
    names = list(dict.fromkeys([*(phase for _, _, phase in PHASE_POINTS), "other"]))
    print(f"\nphases of one -j 1 run, seconds (x parse-only {parse_seconds:.2f} s):")
    print(f"{'':42}" + "".join(f"{label:>30}" for label in runs))
    for name in [*names, "total"]:
        cells = []
        for seconds in measured.values():
            value = sum(seconds.values()) if name == "total" else seconds.get(name, 0.0)
            cells.append(f"{value:8.2f} s {value / parse_seconds:6.2f}x")
        print(f"{name:42}" + "".join(f"{cell:>30}" for cell in cells))


def small(runs: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "project"
        lines = small_project(tree)
        print(f"generated project: {SMALL_FILES} files, {lines:,} lines, -j {default_jobs()}")
        median_seconds(migrate_with_reports(tree), 1)  # warm the imports and caches of this process
        for label, action in (
            ("ascendify migrate (command)", migrate_command(tree)),
            ("run_migration (library)", migrate_with_reports(tree)),
        ):
            wall, cpu = median_seconds(action, runs)
            print(f"{label:28} wall {wall:5.2f} s  cpu {cpu:5.2f} s")
    print(f"(median of {runs} runs; target: wall < 1 s)")


def median_seconds(action: Action, runs: int, scratch: Path | None = None) -> tuple[float, float]:
    """Median wall time and median CPU time (this process plus its finished workers). Each run
    writes into a new empty folder (in ``scratch``, else the temporary folder), made before the
    clock starts and removed after it stops: removing thousands of files is the benchmark's cost,
    not the action's."""
    walls, cpus = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(dir=scratch) as folder:
            out = Path(folder) / "out"
            cpu_before = _cpu_seconds()
            started = time.perf_counter()
            action(out)
            walls.append(time.perf_counter() - started)
            cpus.append(_cpu_seconds() - cpu_before)
    return statistics.median(walls), statistics.median(cpus)


def interleaved_runs(
    actions: dict[str, tuple[Action, Path | None]], runs: int
) -> dict[str, list[tuple[float, float]]]:
    """Wall and CPU time of each run of each action, the actions taking turns run after run: a
    shared machine's load drifts over minutes, and taking turns puts the baseline and the measured
    actions under the same drift (one after the other, the ratio measured the drift as much as the
    code)."""
    times: dict[str, list[tuple[float, float]]] = {label: [] for label in actions}
    for _ in range(runs):
        for label, (action, scratch) in actions.items():
            times[label].append(median_seconds(action, 1, scratch))
    return times


def _median_ratio(
    runs: list[tuple[float, float]], baseline: list[tuple[float, float]], at: int
) -> float:
    """The median of each run's time over the baseline's time in the same turn (wall: 0, CPU: 1)."""
    return statistics.median(run[at] / base[at] for run, base in zip(runs, baseline, strict=True))


def _cpu_seconds() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def compile_package() -> None:
    """Compile ascendify's modules to bytecode beside them, as an installed package has them: the
    command's rows start a fresh interpreter each, and one that compiles ~100 modules from their
    source on every start (a checkout run with PYTHONDONTWRITEBYTECODE) pays ~0.3 s more of CPU."""
    compileall.compile_dir(Path(ascendify.__file__).parent, quiet=1)


def main() -> None:
    compile_package()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=default_jobs())
    parser.add_argument("--small", action="store_true", help="the 50-file project instead")
    parser.add_argument("--no-phases", action="store_true", help="skip the phase by phase run")
    parser.add_argument(
        "--tree", type=Path, help="the .py files of this tree instead (a fetched copy of torch's)"
    )
    args = parser.parse_args()
    if args.small:
        small(args.runs)
        return
    package = args.tree or torch_sources()
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "torch"
        files, lines = copy_python_tree(package, tree)
        print(f"sources: {files} files, {lines:,} lines ({package})")
        command = f"ascendify migrate, -j {args.jobs}"
        actions: dict[str, tuple[Action, Path | None]] = {
            "ast.parse only (1 process)": (parse_only(tree), None),
            "migration only, -j 1": (migrate(tree, 1), None),
            "migration --target portable, -j 1": (migrate(tree, 1, PORTABLE), None),
            "analyze (static), -j 1": (analyze(tree, 1), None),
            command: (migrate_command(tree, args.jobs), None),
            f"{command} --target portable": (
                migrate_command(tree, args.jobs, "--target", "portable"),
                None,
            ),
        }
        if os.access(MEMORY, os.W_OK):
            actions[f"{command}, in memory"] = (migrate_command(tree, args.jobs), MEMORY)
        actions[f"creating {files} files"] = (create_files(files), None)
        measured = interleaved_runs(actions, args.runs)
        baseline = measured["ast.parse only (1 process)"]
        report(measured, baseline, files, lines, args.runs)
        if not args.no_phases:
            phase_times(tree, statistics.median(wall for wall, _ in baseline))


def report(
    measured: dict[str, list[tuple[float, float]]],
    baseline: list[tuple[float, float]],
    files: int,
    lines: int,
    runs: int,
) -> None:
    print(
        f"{'':44} {'wall s':>7} {'files/s':>8} {'lines/s':>10} {'vs parse':>9} "
        f"{'cpu s':>7} {'cpu vs parse':>13}"
    )
    for label, times in measured.items():
        seconds = statistics.median(wall for wall, _ in times)
        cpu = statistics.median(cpu for _, cpu in times)
        print(
            f"{label:44} {seconds:7.2f} {files / seconds:8.0f} {lines / seconds:10,.0f} "
            f"{_median_ratio(times, baseline, 0):8.2f}x {cpu:7.2f} "
            f"{_median_ratio(times, baseline, 1):12.2f}x"
        )
    print(
        f"(medians of {runs} runs; a ratio is the median of each run's over the baseline's of the "
        "same turn; targets: the command <= 0.80x parse wall and <= 1.50x parse CPU, its "
        "--target portable within 1.2x of it; the -j 1 rows have none; CPU time counts worker "
        "processes too)"
    )


if __name__ == "__main__":
    main()
