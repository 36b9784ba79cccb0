"""``ASCENDIFY_AUTO=1``: enable the redirect at interpreter start, in every process of a job.

A ``.pth`` file in site-packages holding ``HOOK_LINE`` runs :func:`run` when Python starts. Without the
variable it costs one environment lookup; with it, torch is imported at start-up and the redirect enabled
before the user's first line runs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

AUTO_VARIABLE = "ASCENDIFY_AUTO"
PTH_NAME = "ascendify-auto.pth"
# .pth lines that start with "import" are executed by the site module; keep it to one cheap line.
HOOK_LINE = (
    "import os; os.environ.get('ASCENDIFY_AUTO', '0') not in ('', '0') "
    "and __import__('ascendify.auto._startup').auto._startup.run()\n"
)


def run() -> None:
    value = os.environ.get(AUTO_VARIABLE, "0")
    if value != "1":
        print(
            f"ascendify: {AUTO_VARIABLE}={value!r} ignored; only '0' or '1' is supported",
            file=sys.stderr,
        )
        return
    from ascendify.auto import enable
    from ascendify.errors import AscendifyError

    try:
        enable()
    except AscendifyError as error:
        # The interpreter is starting: report and leave the process alone rather than kill it.
        print(f"ascendify.auto: not enabled: {error}", file=sys.stderr)


def write_hook(site_dir: Path) -> Path:
    """Write the ``.pth`` hook into ``site_dir`` (a site-packages directory) and return its path."""
    path = site_dir / PTH_NAME
    path.write_text(HOOK_LINE, encoding="utf-8")
    return path
