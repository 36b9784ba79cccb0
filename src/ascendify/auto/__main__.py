"""``python -m ascendify.auto script.py args...`` / ``python -m ascendify.auto -m module args...``.

Runs the script as ``__main__`` with the redirect enabled; ``sys.argv`` is what the script expects.
Works under torchrun too: ``torchrun --nproc-per-node 2 -m ascendify.auto train.py``.
"""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Sequence

USAGE = "usage: python -m ascendify.auto (SCRIPT | -m MODULE) [ARGS...]"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help") or (args[0] == "-m" and len(args) < 2):
        print(USAGE, file=sys.stderr if not args or args[0] == "-m" else sys.stdout)
        return 0 if args and args[0] in ("-h", "--help") else 2

    from ascendify.auto import enable
    from ascendify.errors import AscendifyError

    try:
        enable()
    except AscendifyError as error:
        print(f"ascendify.auto: {error}", file=sys.stderr)
        return 2
    if args[0] == "-m":
        sys.argv = [args[1], *args[2:]]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        script = args[0]
        if not os.path.exists(script):
            print(f"ascendify.auto: no such script: {script}", file=sys.stderr)
            return 2
        sys.argv = [script, *args[1:]]
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
