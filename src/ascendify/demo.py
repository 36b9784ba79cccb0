"""``ascendify demo``: the whole path on a bundled GPU project, on whatever this machine has.

1. copy the bundled GPU training project (``examples/gpu_classifier``) into a work directory;
2. migrate it for Ascend NPUs and show what changed (``change_list.csv``);
3. run it with the launcher, one rank per card: the NPU migration on an Ascend host; elsewhere the
   device-portable migration, which trains on CUDA if present, else on the CPU (gloo), and says so.
"""

from __future__ import annotations

import csv
import shutil
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from rich.console import Console

from ascendify.launch import LaunchOptions, resolve_spec, run_job
from ascendify.launch.devices import discover_devices
from ascendify.migrate import Modes, Options, Settings, Target, run_migration

EXAMPLE = "gpu_classifier"
CPU_RANKS = 2


@dataclass(frozen=True)
class DemoPlan:
    workdir: Path
    target: Target  # which migration is run
    nproc_per_node: str  # a number or "auto"
    reason: str  # why that target, for the user

    @property
    def example(self) -> Path:
        return self.workdir / EXAMPLE

    def result(self, target: Target) -> Path:
        return self.workdir / target.value / f"{EXAMPLE}_msft"


def plan_demo(workdir: Path, env: Mapping[str, str], root: Path = Path("/")) -> DemoPlan:
    """Decide what to run from the devices this node has (nothing is touched)."""
    devices = discover_devices(env, root)
    if devices.kind == "npu":
        return DemoPlan(workdir, Target.NPU, "auto", f"Ascend NPU host ({devices.reason})")
    if devices.kind == "cuda":
        reason = f"no Ascend NPU here; NVIDIA GPUs found ({devices.reason})"
        return DemoPlan(workdir, Target.PORTABLE, "auto", reason)
    reason = f"no Ascend NPU or NVIDIA GPU here: {CPU_RANKS} ranks on the CPU (gloo)"
    return DemoPlan(workdir, Target.PORTABLE, str(CPU_RANKS), reason)


def run_demo(plan: DemoPlan, console: Console) -> int:
    """Copy, migrate (NPU, and portable when that is what runs here), then train; the exit code."""
    _copy_example(plan.example)
    say: Callable[[str], None] = console.print
    # One unbroken line: the path is for copying.
    console.print(f"working in {plan.workdir} (--workdir to choose another)", soft_wrap=True)
    copied, *migrations, training = step_titles(plan)
    say(copied)
    for title, target in zip(migrations, _migration_targets(plan), strict=True):
        say(title)
        _migrate(plan, target, console)
    _show_changes(plan.result(Target.NPU) / "change_list.csv", console)
    say(training)
    return _train(plan, console)


def step_titles(plan: DemoPlan) -> list[str]:
    """The demo's steps in order, numbered from 1: the copy, one per migration, the run."""
    steps = [
        ("GPU project", f" copied to {plan.example}"),
        *((f"migrate --target {target.value}", "") for target in _migration_targets(plan)),
        ("run", f" the {plan.target.value} migration: {plan.reason}"),
    ]
    return [
        f"[bold]{number}. {name}[/bold]{detail}"
        for number, (name, detail) in enumerate(steps, start=1)
    ]


def _migration_targets(plan: DemoPlan) -> tuple[Target, ...]:
    """The NPU migration always (its change list is shown), then the one that runs here."""
    return tuple(dict.fromkeys((Target.NPU, plan.target)))


def _copy_example(destination: Path) -> None:
    with resources.as_file(resources.files("ascendify") / "examples" / EXAMPLE) as source:
        if destination.exists():
            shutil.rmtree(destination)
        shutil.copytree(source, destination, ignore=shutil.ignore_patterns("__pycache__"))


def _migrate(plan: DemoPlan, target: Target, console: Console) -> None:
    output = plan.result(target).parent
    output.mkdir(parents=True, exist_ok=True)
    options = Options(
        source=plan.example,
        output=output,
        settings=Settings(modes=Modes(target=target)),
        force=True,
    )
    run_migration(options, console, console)


def _show_changes(change_list: Path, console: Console, limit: int = 12) -> None:
    with change_list.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    console.print(f"{len(rows)} changes recorded in {change_list}, for example:")
    for row in rows[:limit]:
        console.print(
            f"  {row['File']}:{row['Start Line']}  {row['Rule']}  {row['Message']}", highlight=False
        )


def _train(plan: DemoPlan, console: Console) -> int:
    project = plan.result(plan.target)
    # This interpreter, not the `python` on PATH: it is the one that has torch and ascendify, also
    # when the demo is started through a virtual environment's script without activating it.
    options = LaunchOptions(
        command=(
            sys.executable,
            "train.py",
            "--epochs",
            "2",
            f"--train_url={plan.workdir / 'output'}",
        ),
        nproc_per_node=plan.nproc_per_node,
        log_dir=plan.workdir / "logs",
        cwd=project,
    )
    result = run_job(resolve_spec(options), log=console.print)
    console.print(result.message, highlight=False)
    if result.exit_code == 0:
        console.print(f"checkpoint: {plan.workdir / 'output' / 'model.pt'}")
    return result.exit_code
