"""One file at a time, or many in worker processes: the map that ``migrate`` and ``analyze`` share.

Workers ignore SIGINT: Ctrl-C reaches the whole process group, and only the parent should answer it
(one message instead of a traceback per worker). However the parent stops (done, an error, Ctrl-C),
work not yet started is cancelled and the workers are waited for, so no process is left behind.
"""

from __future__ import annotations

import functools
import os
import signal
from collections.abc import Callable, Generator, Sequence
from typing import Any, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")
Shared = TypeVar("Shared")


# Fewer items are done in one process. Measured on 2 cores with 50 scripts of ~110 lines: migrating
# them took 0.17 s in-process and 0.23 s of CPU with two workers, analysing them 0.09 s and 0.13 s.
# The pool's ~50 ms pays back only once the in-process work passes ~0.1 s (about 30 such files for
# migrate, 55 for analyze); one threshold for both keeps projects of tens of scripts in-process.
# ``benchmarks/bench_migrate.py --small`` measures a 50-file project through the command.
PARALLEL_FROM = 64


def default_jobs() -> int:
    """The ``-j`` default: the cores this process may run on (its CPU affinity where the system
    has one, as under ``taskset`` or a container's CPU set), else every core of the machine."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def max_jobs() -> int:
    """The largest ``-j``: workers past four per core only cost memory (each holds an interpreter)."""
    return max(64, 4 * default_jobs())


def jobs_option(text: str) -> int:
    """``-j N`` as the command line takes it: a whole number from 1 to :func:`max_jobs`."""
    import argparse  # only when -j is given

    most = max_jobs()
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= most:
        raise argparse.ArgumentTypeError(
            f"takes a number of workers from 1 to {most}, not {text!r}"
        )
    return value


def parallel_map(
    function: Callable[[Shared, Item], Result],
    shared: Shared,
    items: Sequence[Item],
    workers: int,
) -> Generator[Result, None, None]:
    """``function(shared, item)`` for each item, in order, in ``workers`` processes unless there are
    fewer than :data:`PARALLEL_FROM` items (then worker start-up costs more than it saves).

    ``shared`` (the run's settings, say) goes to each worker once, when it starts (a forked worker
    inherits it), not with every chunk of items: unpickled and hashed again per chunk, the 13,000
    project exports of torch's tree cost ~60 ms a chunk, ~4 s of CPU time over its 65 chunks."""
    if workers <= 1 or len(items) < PARALLEL_FROM:
        yield from (function(shared, item) for item in items)
        return
    # Imported here: the command line imports this module for default_jobs() on every start.
    from concurrent.futures import ProcessPoolExecutor

    # Chunks amortise the inter-process round trip; many per worker keep the load balanced (a chunk
    # holding a project's largest files must not leave the other workers idle at the end).
    chunksize = max(1, len(items) // (workers * 32))
    executor = ProcessPoolExecutor(
        max_workers=workers, initializer=_start_worker, initargs=(function, shared)
    )
    try:
        yield from executor.map(_call, items, chunksize=chunksize)
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


# In a worker process: the map's function with its shared value bound (set when the worker starts).
_bound: list[Callable[[Any], Any]] = []


def _start_worker(function: Callable[[Any, Any], Any], shared: object) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _bound[:] = [functools.partial(function, shared)]


def _call(item: Any) -> Any:
    return _bound[0](item)
