"""Start-up of every Python process of a program run by ``compare dump``; imports nothing heavy.

``compare dump`` writes :data:`SITECUSTOMIZE` as ``sitecustomize.py`` into a folder it puts first on
the program's ``PYTHONPATH``, so every Python the program starts (a launcher's ranks, torchrun's
workers, spawned processes) runs :func:`start` at interpreter start. :func:`start` waits for the
program's own ``import torch`` (:func:`ascendify._autostart.after_torch_import`, as the runtime
redirect's hook does) and arms the recorder then; processes that never import torch record nothing.
The ``sitecustomize`` ours hides (a distribution's, a virtual environment's) still runs after it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ascendify._autostart import after_torch_import, run_hidden_sitecustomize
from ascendify.compare.settings import DUMP_VARIABLE

SITECUSTOMIZE = "import ascendify.compare._startup\nascendify.compare._startup.start(__file__)\n"


def start(our_file: str) -> None:
    if os.environ.get(DUMP_VARIABLE):
        after_torch_import(_arm)
    run_hidden_sitecustomize(Path(our_file).resolve().parent)


def _arm() -> None:
    try:
        from ascendify.compare._recorder import arm

        arm(Path(os.environ[DUMP_VARIABLE]))
    except Exception as error:  # someone else's program: report, and let it run unrecorded
        print(f"ascendify compare: not recording this process: {error}", file=sys.stderr)


def write_sitecustomize(folder: Path) -> Path:
    path = folder / "sitecustomize.py"
    path.write_text(SITECUSTOMIZE, encoding="utf-8")
    return path
