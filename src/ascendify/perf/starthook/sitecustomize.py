"""``--profile``'s start hook: every Python process that imports torch arms the step profiler.

Python imports ``sitecustomize`` at start-up; ``--profile`` puts this folder first on the ranks'
``PYTHONPATH``. The profiler is armed right after the program's own ``import torch``
(:func:`ascendify._autostart.after_torch_import`); a process that never imports torch pays one
environment look-up. The ``sitecustomize`` this one hides runs afterwards, as Python would run it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ascendify._autostart import after_torch_import, run_hidden_sitecustomize


def _arm() -> None:
    try:
        from ascendify.perf.capture import arm

        arm()
    except Exception as error:  # someone else's program: report, and let it run unprofiled
        print(f"ascendify --profile: not profiling this process: {error}", file=sys.stderr)


if os.environ.get("ASCENDIFY_PROFILE_DIR"):
    after_torch_import(_arm)
run_hidden_sitecustomize(Path(__file__).resolve().parent)
