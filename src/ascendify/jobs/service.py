"""What the ``ascendify job`` subcommands do, as library calls: submit, reconcile, stop, ...

Every call first reconciles the store with the machine: a job whose runner is gone (reboot,
``kill -9``) is marked ``failed`` with cause ``runner lost`` and whatever it left running is
ended, so no job stays "running" forever.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from ascendify._fs import shown
from ascendify.errors import AscendifyError
from ascendify.jobs.layout import MAX_CODE_DEPTH, JobLayout, too_deep
from ascendify.jobs.spec import MANIFEST_ENGINES, JobSpec, check_fits, is_masked
from ascendify.jobs.store import (
    ACTIVE,
    FINAL,
    RUNNER_LOST,
    JobRecord,
    JobStore,
    StoreUnwritable,
)

# A runner records itself within moments of the submit; a queued job without one is lost.
RUNNER_START_TIMEOUT = 60.0
FOLLOW_POLL = 0.2
LOG_BLOCK = 1 << 20  # bytes of a log read at a time by `job logs`
# Process start times agree to this many seconds (psutil rounds them differently per platform).
_SAME_START = 1.0


def submit(store: JobStore, spec: JobSpec, rerun_of: str | None = None) -> JobRecord:
    """Record the job, snapshot its code and start its detached runner; returns at once."""
    if spec.engine in MANIFEST_ENGINES:
        raise AscendifyError(
            f"engine {spec.engine} submits to a Kubernetes cluster, which ascendify does not do "
            "itself: use --dry-run to print the manifest, then `kubectl create -f` it"
        )
    if spec.engine == "ray":
        from ascendify.jobs.ray_engine import check_cluster

        spec = replace(spec, address=check_cluster(spec.address))
    if os.path.realpath(spec.code_dir) == os.path.realpath(store.root):
        raise AscendifyError(
            f"the code dir {spec.code_dir} is the job store itself: give the folder of the code"
        )
    deep = too_deep(spec.code_dir, store.root)
    if deep is not None:
        raise AscendifyError(
            f"the code dir {spec.code_dir} holds folders nested more than {MAX_CODE_DEPTH} deep "
            f"({shown(str(deep)[:200])}...): give the folder of the code"
        )
    record = store.create(spec.to_json(), rerun_of=rerun_of)
    layout = JobLayout(store.job_dir(record.id), record.id)
    try:
        layout.root.mkdir(parents=True)
        layout.snapshot(spec.code_dir, store.root)
        layout.spec.write_text(json.dumps(spec.to_json(), indent=2) + "\n", encoding="utf-8")
    except OSError as error:
        _forget(store, layout)  # a half-copied snapshot would fill the disk for nothing
        raise AscendifyError(
            f"job {record.id} could not be submitted: {_why(error)}; nothing of it was kept"
        ) from None
    try:
        _start_runner(store, spec, layout)
    except OSError as error:
        store.transition(record.id, "failed", str(error), exit_code=1, cause=f"submit: {error}")
        raise AscendifyError(f"job {record.id} could not start: {error}") from None
    return store.get(record.id)


def _forget(store: JobStore, layout: JobLayout) -> None:
    """Remove a job that never started: its folder, then its record (or, if the store cannot be
    written even with the folder's room back, mark it failed)."""
    shutil.rmtree(layout.root, ignore_errors=True)
    try:
        store.remove(layout.job_id)
    except StoreUnwritable:
        with contextlib.suppress(StoreUnwritable):
            store.transition(layout.job_id, "failed", "not submitted", exit_code=1)


def _why(error: OSError) -> str:
    """One line for a failed copy: shutil's error lists every file (the first says why)."""
    if isinstance(error, shutil.Error) and error.args and isinstance(error.args[0], list):
        problems = error.args[0]
        return f"{shown(str(problems[0][2]))} ({len(problems)} file(s) not copied)"
    where = f"{shown(error.filename)}: " if error.filename else ""
    return f"{where}{error.strerror or error}"


def _start_runner(store: JobStore, spec: JobSpec, layout: JobLayout) -> None:
    import psutil

    # The full spec (credentials in env included) goes through a pipe, never to disk.
    full = {**spec.to_json(), "env": dict(spec.env), "code_dir": str(layout.code)}
    with layout.runner_log.open("ab") as log:
        runner = subprocess.Popen(
            [sys.executable, "-m", "ascendify.jobs.runner", str(store.root), layout.job_id],
            stdin=subprocess.PIPE,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=layout.root,
            start_new_session=True,  # survives the CLI, its terminal and its Ctrl-C
        )
    assert runner.stdin is not None
    runner.stdin.write(json.dumps(full).encode())
    runner.stdin.close()
    with contextlib.suppress(psutil.Error):
        store.set_runner(layout.job_id, runner.pid, psutil.Process(runner.pid).create_time())
    # The runner is not waited for: it outlives us, and init reaps it.
    runner.returncode = 0


def rerun(
    store: JobStore,
    job_id: str,
    hyper: Mapping[str, str] | None = None,
    environment: Mapping[str, str] | None = None,
    unset: Sequence[str] = (),
) -> JobRecord:
    """The same job again: the stored spec on the old job's code snapshot, with ``hyper``
    changing or adding hyperparameters and those named in ``unset`` removed. The new job names
    the old one (``rerun_of``).

    Credentials were never stored: the rerun takes them from ``environment`` (this process's),
    and is refused, naming them, when any is not set there.
    """
    environment = os.environ if environment is None else environment
    old = store.get(job_id)
    spec = JobSpec.from_json(old.spec)
    secrets = [name for name, value in old.spec["env"].items() if is_masked(value)]
    missing = [name for name in secrets if name not in environment]
    if missing:
        raise AscendifyError(
            f"job {old.id} had {', '.join(missing)} in its env, whose value is never stored: "
            "set it in this environment to rerun the job"
        )
    code = JobLayout(store.job_dir(old.id), old.id).code
    if not code.is_dir():
        raise AscendifyError(f"job {old.id} has no code snapshot left in {code}")
    env = {**spec.env, **{name: environment[name] for name in secrets}}
    changed = replace(
        spec,
        code_dir=code,
        code_name=spec.code_folder,  # the snapshot's folder is "code"; the ranks see the code's
        env=env,
        hyper=rerun_hyper(old.id, spec.hyper, hyper or {}, unset),
    )
    check_fits(changed)  # the new hyperparameters, as validate checks them
    return submit(store, changed, rerun_of=old.id)


def rerun_hyper(
    job_id: str, old: Mapping[str, str], changed: Mapping[str, str], unset: Sequence[str]
) -> dict[str, str]:
    """A rerun's hyperparameters: ``old`` with ``changed`` set and ``unset`` removed; a name
    to remove that the job does not have, or that is also set, is refused, naming it."""
    for name in unset:
        if name in changed:
            raise AscendifyError(f"--unset-hyper {name} and --hyper {name}=...: choose one")
        if name not in old:
            have = ", ".join(sorted(old)) or "none"
            raise AscendifyError(f"job {job_id} has no hyperparameter {name} (it has: {have})")
    return {name: value for name, value in {**old, **changed}.items() if name not in unset}


def reconcile(store: JobStore) -> None:
    """Mark jobs whose runner is gone as failed (runner lost) and end what they left running."""
    for job in store.jobs(states=ACTIVE):
        # A store that cannot be written (its disk is full) is reconciled by a later command;
        # this one still reads it.
        with contextlib.suppress(StoreUnwritable):
            _reconcile_one(store, job)


def _reconcile_one(store: JobStore, job: JobRecord) -> None:
    if job.runner_pid is None:
        if time.time() - job.created > RUNNER_START_TIMEOUT:
            store.transition(job.id, "failed", "no runner", exit_code=1, cause=RUNNER_LOST)
        return
    if _alive(job.runner_pid, job.runner_started):
        return
    if store.transition(job.id, "failed", "runner gone", exit_code=1, cause=RUNNER_LOST):
        _end_leftovers(store, job)


def _end_leftovers(store: JobStore, job: JobRecord) -> None:
    from ascendify.jobs.node import kill
    from ascendify.launch.containment import tree

    leftovers = [
        found
        for node in store.nodes(job.id)
        if node.pid is not None and _alive(node.pid, node.pid_started)
        for found in tree(node.pid)
    ]
    kill(leftovers)


def _alive(pid: int, started: float | None) -> bool:
    """Is ``pid`` still the process that started at ``started`` (pids are reused)?"""
    import psutil  # only when there are active jobs: `job list` stays quick

    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return False
        return started is None or abs(process.create_time() - started) < _SAME_START
    except psutil.Error:
        return False


def stop(store: JobStore, job_id: str, timeout: float | None = None) -> JobRecord:
    """Ask the runner to stop the job gracefully and wait for it to end (it then is forced)."""
    reconcile(store)
    job = store.get(job_id)
    if not job.active:
        return job
    spec = JobSpec.from_json(job.spec)
    if job.runner_pid is not None and _alive(job.runner_pid, job.runner_started):
        with contextlib.suppress(ProcessLookupError):
            os.kill(job.runner_pid, signal.SIGTERM)
    from ascendify.jobs.node import UPLOAD_ALLOWANCE

    limit = timeout if timeout is not None else spec.grace_period + UPLOAD_ALLOWANCE + 10
    return wait(store, job.id, limit)


def wait(store: JobStore, job_id: str, timeout: float | None = None) -> JobRecord:
    """Poll until the job ends (or ``timeout`` passes); returns its record."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        reconcile(store)
        job = store.get(job_id)
        if job.state in FINAL or (deadline is not None and time.monotonic() >= deadline):
            return job
        time.sleep(FOLLOW_POLL)


def remove(store: JobStore, job_id: str) -> JobRecord:
    reconcile(store)
    job = store.get(job_id)
    if job.active:
        raise AscendifyError(f"job {job.id} is {job.state}: `ascendify job stop {job.id}` first")
    shutil.rmtree(store.job_dir(job.id), ignore_errors=True)
    store.remove(job.id)
    return job


def log_files(store: JobStore, job: JobRecord, node: int | None, rank: int | None) -> list[Path]:
    """The worker logs (all nodes, or ``node``'s) or one rank's log."""
    layout = JobLayout(store.job_dir(job.id), job.id)
    if rank is not None:
        world = job.nodes * job.cards
        if not 0 <= rank < world:
            raise AscendifyError(f"rank {rank} is outside 0..{world - 1} of job {job.id}")
        return [layout.rank_log(rank, rank % job.cards)]
    if node is not None:
        if not 0 <= node < job.nodes:
            raise AscendifyError(f"node {node} is outside 0..{job.nodes - 1} of job {job.id}")
        return [layout.worker_log(node)]
    return [layout.worker_log(n) for n in range(job.nodes)]


def follow(
    store: JobStore, job_id: str, paths: Sequence[Path], starts: Sequence[int] | None = None
) -> Iterator[bytes]:
    """The lines of every file of ``paths`` (each node's worker log: rank-prefixed lines) as they
    are written, from ``starts`` (default: each file's beginning), until the job has ended.

    A block of complete lines at a time, at most :data:`LOG_BLOCK` bytes (a longer line comes in
    pieces): memory stays bounded whatever the log's size.
    """
    positions = list(starts) if starts is not None else [0] * len(paths)
    while True:
        ended = store.get(job_id).state in FINAL
        for index, path in enumerate(paths):
            for block in log_blocks(path, positions[index], whole=ended):
                positions[index] += len(block)
                yield block
        if ended:
            return
        time.sleep(FOLLOW_POLL)
        reconcile(store)


def log_blocks(path: Path, start: int, *, whole: bool) -> Iterator[bytes]:
    """What ``path`` holds from ``start`` on, in blocks of complete lines (``whole``: the last,
    unfinished line too)."""
    with contextlib.suppress(FileNotFoundError), path.open("rb") as handle:
        handle.seek(start)
        while block := handle.read(LOG_BLOCK):
            if len(block) == LOG_BLOCK or whole:
                cut = block.rfind(b"\n") + 1 or len(block)  # a longer line: in pieces
            else:
                cut = block.rfind(b"\n") + 1  # the last line is still being written
            if cut == 0:
                return
            handle.seek(start + cut)
            start += cut
            yield block[:cut]


def tail_start(path: Path, lines: int) -> int:
    """Where the last ``lines`` lines of ``path`` start (0 when it has fewer; its end for 0),
    read backwards a block at a time."""
    if lines == 0:
        return path.stat().st_size if path.exists() else 0
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return 0
    with handle:
        end = handle.seek(0, os.SEEK_END)
        position = end
        breaks = 0
        while position > 0:
            size = min(LOG_BLOCK, position)
            position -= size
            handle.seek(position)
            block = handle.read(size)
            if position + size == end and block.endswith(b"\n"):
                block = block[:-1]  # the last line's own break
            at = len(block)
            while (at := block.rfind(b"\n", 0, at)) >= 0:
                breaks += 1
                if breaks == lines:
                    return position + at + 1
        return 0
