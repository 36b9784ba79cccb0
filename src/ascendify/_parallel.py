"""One file at a time, or many in worker processes: the map that ``migrate`` and ``analyze`` share.

Workers ignore SIGINT: Ctrl-C reaches the whole process group, and only the parent should answer it
(one message instead of a traceback per worker). However the parent stops (done, an error, Ctrl-C),
work not yet started is cancelled and the workers are waited for, so no process is left behind.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


def parallel_map(
    function: Callable[[Item], Result], items: Sequence[Item], workers: int, serial_below: int = 2
) -> Generator[Result, None, None]:
    """``map(function, items)`` in order, in ``workers`` processes unless there are fewer than
    ``serial_below`` items (then worker start-up costs more than it saves)."""
    if workers <= 1 or len(items) < serial_below:
        yield from map(function, items)
        return
    # Chunks amortise the inter-process round trip; several per worker keep the load balanced.
    chunksize = max(1, len(items) // (workers * 8))
    executor = ProcessPoolExecutor(max_workers=workers, initializer=_ignore_interrupts)
    try:
        yield from executor.map(function, items, chunksize=chunksize)
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
