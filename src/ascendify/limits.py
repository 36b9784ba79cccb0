"""How far the numbers and sizes a user gives may go: every bound on an input, in one place.

A value past a bound is refused before anything starts, by ``job validate`` as by ``run``, with
a message naming the field and the bound (docs/jobs.md and docs/launcher.md list them). The
bounds are far above real use; they stop a typo or a hostile input from running for hours
(a million cards made a million links), waiting forever (``inf`` seconds) or failing late.
"""

from __future__ import annotations

import math

# Ascend servers carry 8 or 16 cards, GPU servers up to 16: anything far above is a broken input
# (a rank table listing a million devices once started creating a folder per rank).
MAX_DEVICES_PER_SERVER = 64
# A job of the local engine runs every node on this machine, one loopback address each
# (127.0.0.1 ... 127.0.0.254), and every rank of every node as a process here.
MAX_LOCAL_NODES = 254
MAX_LOCAL_RANKS = 256
MAX_NODES = 1024  # the other engines: far above the largest clusters jobs are run on
MAX_GRACE_PERIOD = 3600.0  # SIGTERM -> SIGKILL: an hour is more than any checkpoint needs
MAX_WAIT = 86400.0  # a day: the join timeout and the upload interval
MAX_HANG_TIMEOUT = 7 * 86400.0  # a week without a line of output is a hang whatever the job
# Below a second, a healthy rank's pause between two lines (or the samples that look for its
# progress) would read as a hang.
MIN_HANG_TIMEOUT = 1.0
MAX_RESTARTS = 1000  # restarts of a job: far above any platform's (ModelArts allows a few)
# What reaches a rank's environment and argv (env values, hyperparameters): Linux refuses to start
# a process with one string over 128 KiB, or with argv and environment over a quarter of its stack
# (2 MiB by default), so a spec that would fail there is refused at validate time. The total is
# that of the env table and, apart, of the hyperparameters: both together leave room for the rest.
MAX_ARG_BYTES = 128 * 1024 - 1
MAX_ARGS_TOTAL_BYTES = 512 * 1024


def seconds(value: object, *, most: float, zero: bool, least: float = 0.0) -> float:
    """``value`` as seconds: a finite number, above 0 (or 0 when ``zero``), at most ``most``;
    other than 0, at least ``least``.

    ValueError's message says what is wrong, for a caller to prefix with the field's name.
    """
    low = "0" if zero else "above 0"
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
        or (value == 0 and not zero)
        or value > most
        or 0 < value < least
    ):
        if least > 0:
            zero_means = "0 (off) or " if zero else ""
            raise ValueError(
                f"must be {zero_means}a number of seconds from {least:g} to {most:g}, got {value!r}"
            )
        raise ValueError(f"must be a number of seconds from {low} to {most:g}, got {value!r}")
    return float(value)


def check_strings_size(strings: dict[str, str], what: str) -> None:
    """``NAME=VALUE`` strings a process gets: each and all together within what Linux starts."""
    total = 0
    for name, value in strings.items():
        size = len(f"{name}={value}".encode())
        if size > MAX_ARG_BYTES:
            raise ValueError(
                f"{name}: {size} bytes; one {what} may hold at most {MAX_ARG_BYTES} bytes"
            )
        total += size
    if total > MAX_ARGS_TOTAL_BYTES:
        raise ValueError(f"{total} bytes in all; at most {MAX_ARGS_TOTAL_BYTES} fit a process")
