"""``python -m ascendify.auto script.py args...`` / ``python -m ascendify.auto -m module args...``.

Runs the script as ``__main__`` with the redirect enabled; ``sys.argv`` is what the script expects.
Works under torchrun too: ``torchrun --nproc-per-node 2 -m ascendify.auto train.py``.
``python -m ascendify.auto --plan npu|cpu`` prints what would be patched, and changes nothing.
"""

from __future__ import annotations

import importlib.util
import os
import runpy
import sys
from collections.abc import Sequence

USAGE = "usage: python -m ascendify.auto (SCRIPT | -m MODULE) [ARGS...] | --plan npu|cpu"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help") or (args[0] == "-m" and len(args) < 2):
        print(USAGE, file=sys.stderr if not args or args[0] == "-m" else sys.stdout)
        return 0 if args and args[0] in ("-h", "--help") else 2

    from ascendify.auto import enable
    from ascendify.errors import AscendifyError

    if args[0] == "--plan":
        return print_plan(args[1:])
    missing = _missing_target(args)
    if missing:
        print(f"ascendify.auto: {missing}", file=sys.stderr)
        return 2
    try:
        enable()
    except AscendifyError as error:
        print(f"ascendify.auto: {error}", file=sys.stderr)
        return 2
    try:
        _run(args)
    except ModuleNotFoundError as error:
        if error.name != "torch_npu":
            raise
        program = args[1] if args[0] == "-m" else args[0]
        print(f"ascendify.auto: {program}: {NPU_RESULT_HINT}", file=sys.stderr)
        return 2
    return 0


# The redirect found no NPU and the program imports torch_npu itself: most likely a result of
# `ascendify migrate` for the NPU target, started on a machine without torch_npu.
NPU_RESULT_HINT = (
    "imports torch_npu, which is not installed here (code migrated for Ascend NPUs needs it). "
    "On this machine, migrate the original with --target portable, or run the original GPU code "
    "with python -m ascendify.auto"
)


def _run(args: Sequence[str]) -> None:
    if args[0] == "-m":
        sys.argv = [args[1], *args[2:]]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        script = args[0]
        sys.argv = [script, *args[1:]]
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        runpy.run_path(script, run_name="__main__")


def _missing_target(args: Sequence[str]) -> str | None:
    """What is wrong with the script or module to run, checked before anything is patched."""
    if args[0] != "-m":
        return None if os.path.exists(args[0]) else f"no such script: {args[0]}"
    return None if _module_exists(args[1]) else f"no module named {args[1]!r}"


def _module_exists(name: str) -> bool:
    """Whether ``-m name`` can be found, without running it (its parent packages are imported)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a missing parent package; an empty or relative name
        return False


def print_plan(devices: Sequence[str]) -> int:
    from ascendify.auto import DEVICES, plan

    if len(devices) != 1 or devices[0] not in DEVICES:
        print(USAGE, file=sys.stderr)
        return 2
    for row in plan(devices[0]):
        print(f"{row.code}  {row.target:55} {row.note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
