"""ModelArts' launcher form: ``python -m ascendify.davincirun CMD ARGS...``.

Everything comes from the platform environment (MA_NUM_GPUS, MA_NUM_HOSTS, VC_TASK_INDEX,
VC_WORKER_HOSTS, RANK_TABLE_FILE, MA_JOB_DIR, ...): the same command on every node, as the
Ascend-Powered-Engine runs a boot file. ``ascendify run`` is the same launcher with flags.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from ascendify.errors import AscendifyError


def main(argv: Sequence[str] | None = None) -> int:
    command = tuple(sys.argv[1:] if argv is None else argv)
    if not command:
        print(
            "usage: python -m ascendify.davincirun CMD ARGS...  (e.g. python train.py)",
            file=sys.stderr,
        )
        return 2
    from ascendify.commands.run import launch
    from ascendify.launch import LaunchOptions

    try:
        return launch(LaunchOptions(command=command, modelarts=True))
    except AscendifyError as error:
        print(f"ascendify.davincirun: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
