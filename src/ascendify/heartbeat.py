"""``ascendify.heartbeat()``: a rank says it is alive without printing.

With ``--hang-timeout`` the launcher gives every rank the path of a file of its own in
``ASCENDIFY_HEARTBEAT_FILE``; touching it (this call, or ``touch "$ASCENDIFY_HEARTBEAT_FILE"``
from any language) counts as output: the hang timeout starts again. One ``utime`` system call,
no import beyond the standard library (no torch), and nothing at all outside the launcher or
without a hang timeout, so it may be called every step.
"""

from __future__ import annotations

import os

HEARTBEAT_VARIABLE = "ASCENDIFY_HEARTBEAT_FILE"


def heartbeat() -> None:
    """Tell the launcher this rank is alive (a no-op when it does not watch for hangs)."""
    path = os.environ.get(HEARTBEAT_VARIABLE)
    if not path:
        return
    try:
        os.utime(path)
    except FileNotFoundError:
        try:
            with open(path, "a"):
                pass
        except OSError:
            return
    except OSError:
        return
