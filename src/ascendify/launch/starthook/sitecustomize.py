"""The launcher's start hook: save now through the frameworks' own save paths, and faulthandler
armed in every Python process of a rank when hangs are watched for.

Python imports ``sitecustomize`` when it starts; the launcher puts this folder first on every
rank's ``PYTHONPATH``. Right after the program's own import of transformers' Trainer (or of
accelerate's Accelerator), the hooks of :mod:`ascendify.savenow_frameworks` are installed; a
program that imports neither pays a look-up per import, and an interpreter that cannot import
ascendify runs the program as it is. With ``--hang-timeout`` each process registers faulthandler
for SIGUSR1, writing to ``$ASCENDIFY_STACKS_DIR/<pid>.txt`` (a forked child, such as
a data-loader worker, re-arms with a file of its own), and the file's existence tells the
launcher the process may be sent SIGUSR1: on a hang it gets the stack of every thread of every
process without stopping any of them (the standard library only, so any interpreter does this).
The ``sitecustomize`` this one hides (a distribution's) is run afterwards as Python would.
"""

from __future__ import annotations

import faulthandler
import importlib.machinery
import importlib.util
import os
import signal
import sys
from collections.abc import Callable
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


# The module whose import, once executed, installs a save-now hook, and the hook.
_FRAMEWORK_HOOKS = {
    "transformers.trainer": "install_trainer_callback",
    "accelerate.accelerator": "install_accelerate_trigger",
}


def _hook_frameworks() -> None:
    if not os.environ.get("ASCENDIFY_SAVE_NOW_FILE"):
        return
    try:
        from ascendify._autostart import after_import
    except ImportError:  # a rank's interpreter without ascendify: the program as it is
        return
    for module, hook in _FRAMEWORK_HOOKS.items():
        after_import(module, _installer(hook))


def _installer(hook: str) -> Callable[[], None]:
    def install() -> None:
        try:
            from ascendify import savenow_frameworks

            getattr(savenow_frameworks, hook)()
        except Exception as error:  # someone else's program: report, and let it run
            print(f"ascendify: save-now not hooked in ({hook}): {error}", file=sys.stderr)

    return install


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
_hook_frameworks()
_run_hidden_sitecustomize()
