"""The launcher's start hook: arms faulthandler in every Python process of a rank.

Python imports ``sitecustomize`` when it starts; the launcher puts this folder first on the ranks'
``PYTHONPATH`` when it watches for hangs (``--hang-timeout``). Each process then registers
faulthandler for SIGUSR1, writing to ``$ASCENDIFY_STACKS_DIR/<pid>.txt`` (a forked child, such as
a data-loader worker, re-arms with a file of its own), and the file's existence tells the
launcher the process may be sent SIGUSR1: on a hang it gets the stack of every thread of every
process without stopping any of them. Only the standard library is used, so any interpreter
runs this; the ``sitecustomize`` it hides (a distribution's) is run afterwards as Python would.
"""

from __future__ import annotations

import faulthandler
import importlib.machinery
import importlib.util
import os
import signal
import sys
from typing import IO

_open: list[IO[str]] = []  # the stacks file stays open for the life of the process


def _arm() -> None:
    folder = os.environ.get("ASCENDIFY_STACKS_DIR")
    if not folder or not hasattr(signal, "SIGUSR1"):
        return
    try:
        os.makedirs(folder, exist_ok=True)
        stacks = open(os.path.join(folder, f"{os.getpid()}.txt"), "w")  # noqa: SIM115
    except OSError:
        return
    faulthandler.register(signal.SIGUSR1, file=stacks, all_threads=True)
    _open[:] = [stacks]


def _run_hidden_sitecustomize() -> None:
    # The next sitecustomize after this folder on the path: searching the entries before it too
    # would run another start hook that runs this one again, without end.
    here = os.path.dirname(os.path.abspath(__file__))
    entries = [os.path.abspath(entry or os.curdir) for entry in sys.path]
    after = entries.index(here) + 1 if here in entries else 0
    path = [entry for entry in entries[after:] if entry != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is not None and spec.loader is not None:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))


_arm()
os.register_at_fork(after_in_child=_arm)
_run_hidden_sitecustomize()
