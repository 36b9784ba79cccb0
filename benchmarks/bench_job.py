"""Job overhead: submit -> first rank running, ``ascendify job`` vs what it is built on.

local: ``ascendify job submit`` (engine local) vs ``ascendify run`` of the same command; the job
adds recording, the code snapshot and the detached runner (target: <= 0.3 s more).
ray: ``ascendify job submit --engine ray`` vs ``ray job submit`` of the same ``ascendify run``
command, on a two-node Ray cluster on loopback addresses started here (target: no slower).
Each rank writes the time its first line ran; runs alternate; medians are reported. Also
``job list`` with 10,000 stored jobs (target: < 0.2 s).

    python benchmarks/bench_job.py [--repeat 5] [--no-ray]   # ray: pip install 'ray[default]'
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.jobs.ray_cluster starts the Ray cluster
SRC = ROOT / "src"
RANK_SCRIPT = """\
import time
started = time.time()
import os
with open(os.path.join(os.environ["MARKERS"], os.environ["RANK"]), "w") as marker:
    marker.write(repr(started))
"""
LIST_JOBS = 10_000


def _env(jobs_dir: Path) -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "ASCENDIFY_JOBS_DIR": str(jobs_dir)}


def _first_rank(command: list[str], env: dict[str, str], markers: Path) -> float:
    """Seconds from starting ``command`` until a rank ran its first line."""
    markers.mkdir()
    started = time.time()
    subprocess.run(command, env={**env, "MARKERS": str(markers)}, check=True,
                   capture_output=True, timeout=300)  # fmt: skip
    deadline = time.monotonic() + 300
    while not any(markers.iterdir()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"no rank of {command[:6]} ran")
        time.sleep(0.01)
    time.sleep(0.05)  # the marker is written; let the write finish before reading it
    return min(float(path.read_text()) for path in markers.iterdir()) - started


def _compare(name: str, commands: dict[str, Callable[[Path], list[str]]], env: dict[str, str],
             work: Path, repeat: int) -> dict[str, float]:  # fmt: skip
    times: dict[str, list[float]] = {label: [] for label in commands}
    for round_ in range(repeat):
        for label, command in commands.items():
            markers = work / f"{name}-{label.replace(' ', '_')}-{round_}"
            times[label].append(_first_rank(command(markers), env, markers))
    medians = {label: statistics.median(values) for label, values in times.items()}
    for label, value in medians.items():
        print(
            f"{name:5}  {label:28} submit -> first rank running: {value:.3f} s (median of {repeat})"
        )
    return medians


def _wait_idle(jobs_dir: Path) -> None:
    """Let every job end before the next measurement (they share two cores)."""
    sys.path.insert(0, str(SRC))
    from ascendify.jobs import service
    from ascendify.jobs.store import ACTIVE, JobStore

    store = JobStore(jobs_dir)
    for job in store.jobs(states=ACTIVE):
        service.wait(store, job.id, timeout=120)


def bench_local(work: Path, repeat: int) -> None:
    jobs_dir = work / "jobs"
    env = _env(jobs_dir)
    py = sys.executable
    script = work / "code" / "rank.py"

    def job(markers: Path) -> list[str]:
        _wait_idle(jobs_dir)
        return [py, "-m", "ascendify", "job", "submit", "--code-dir", str(script.parent),
                "--boot-file", "rank.py", "--cards", "2", "--env", f"MARKERS={markers}"]  # fmt: skip

    def run(_markers: Path) -> list[str]:
        _wait_idle(jobs_dir)
        return [py, "-m", "ascendify", "run", "--nproc-per-node", "2", "--log-dir",
                str(work / "run-logs"), py, str(script)]  # fmt: skip

    medians = _compare("local", {"ascendify job submit": job, "ascendify run": run}, env, work,
                       repeat)  # fmt: skip
    added = medians["ascendify job submit"] - medians["ascendify run"]
    print(f"local  the job adds {added:+.3f} s (target <= 0.3 s)")


def bench_ray(work: Path, repeat: int) -> None:
    from tests.jobs.ray_cluster import HEAD_ADDRESS, ray_cluster

    jobs_dir = work / "ray-jobs"
    env = _env(jobs_dir)
    py = sys.executable
    code = work / "code"
    with ray_cluster(dashboard=True) as address:

        def job(markers: Path) -> list[str]:
            _wait_idle(jobs_dir)
            return [py, "-m", "ascendify", "job", "submit", "--engine", "ray", "--address",
                    address, "--code-dir", str(code), "--boot-file", "rank.py", "--cards", "2",
                    "--env", f"MARKERS={markers}"]  # fmt: skip

        def ray_job(markers: Path) -> list[str]:
            _wait_idle(jobs_dir)
            return [str(Path(py).with_name("ray")), "job", "submit", "--no-wait",
                    "--address", f"http://{HEAD_ADDRESS}:8265",
                    "--runtime-env-json", f'{{"env_vars": {{"MARKERS": "{markers}"}}}}', "--",
                    py, "-m", "ascendify", "run", "--nproc-per-node", "2", "--log-dir",
                    str(work / "ray-run-logs"), py, str(code / "rank.py")]  # fmt: skip

        medians = _compare("ray", {"ascendify job --engine ray": job, "ray job submit": ray_job},
                           env, work, repeat)  # fmt: skip
        _wait_idle(jobs_dir)
        time.sleep(2)  # the last Ray Job's ranks
    ratio = medians["ascendify job --engine ray"] / medians["ray job submit"]
    print(f"ray    ascendify / Ray Jobs = {ratio:.2f}x (target <= 1.0x)")


def bench_list(work: Path) -> None:
    sys.path.insert(0, str(SRC))
    from ascendify.jobs.metrics import jobs_progress
    from ascendify.jobs.report import list_table
    from ascendify.jobs.store import JobStore

    store = JobStore(work / "many")
    spec = {"name": "bench", "engine": "local", "nodes": 2, "cards": 8, "boot_file": "train.py"}
    filled = time.perf_counter()
    for _ in range(LIST_JOBS):
        store.transition(store.create(spec).id, "succeeded", exit_code=0)
    print(f"list   stored {LIST_JOBS} jobs in {time.perf_counter() - filled:.1f} s")
    timings = []
    for _ in range(5):
        started = time.perf_counter()
        jobs = store.jobs()
        table = list_table(jobs, jobs_progress(store, jobs))
        timings.append(time.perf_counter() - started)
    assert table.count("\n") == LIST_JOBS
    print(
        f"list   library: store.jobs() + progress + table of {LIST_JOBS}: "
        f"{statistics.median(timings):.3f} s"
    )
    cli = []
    for _ in range(5):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "ascendify", "job", "list"], env=_env(store.root),
                       check=True, capture_output=True)  # fmt: skip
        cli.append(time.perf_counter() - started)
    bare = []
    for _ in range(5):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - started)
    print(f"list   `ascendify job list` process: {statistics.median(cli):.3f} s "
          f"(a bare `python -c pass`: {statistics.median(bare):.3f} s; target < 0.2 s)")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray comparison")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-job-") as scratch:
        work = Path(scratch)
        (work / "code").mkdir()
        (work / "code" / "rank.py").write_text(RANK_SCRIPT)
        bench_list(work)
        bench_local(work, args.repeat)
        if not args.no_ray:
            bench_ray(work, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
