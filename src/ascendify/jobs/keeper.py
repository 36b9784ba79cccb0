"""``python -m ascendify.jobs.keeper ARGV...``: run ARGV one process removed from its starter.

Ray ends a task's worker with SIGKILL and SIGKILLs the worker's own child processes with it,
which would leave a node agent no chance to stop its ranks (they run in sessions of their own).
The keeper is that child instead: the agent below it gets SIGTERM when the keeper dies (Linux
``PR_SET_PDEATHSIG``) and stops its ranks as on ``job stop``. While both live, the keeper
forwards SIGTERM and SIGINT and exits with the agent's exit code; a signal that comes because the
keeper's own starter died (the Ray worker) ends the keeper instead, so the agent sees its parent
gone and reports its node lost (the other nodes may restart the job) rather than stopped.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from typing import Any


def main(argv: Sequence[str] | None = None) -> int:
    from ascendify.jobs.node import die_with_parent, exit_code

    command = list(sys.argv[1:] if argv is None else argv)
    process = subprocess.Popen(
        command,
        preexec_fn=die_with_parent if sys.platform == "linux" else None,  # noqa: PLW1509
    )

    starter = os.getppid()

    def forward(signum: int, _frame: Any) -> None:
        if os.getppid() != starter:
            os._exit(128 + signum)
        process.send_signal(signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, forward)
    return exit_code(process.wait())


if __name__ == "__main__":
    sys.exit(main())
