"""ModelArts' launcher form: ``python -m ascendify.davincirun CMD ARGS...``.

Everything comes from the platform environment (MA_NUM_GPUS, MA_NUM_HOSTS, VC_TASK_INDEX,
VC_WORKER_HOSTS, RANK_TABLE_FILE, MA_JOB_DIR, ...): the same command on every node, as the
Ascend-Powered-Engine runs a boot file. ``ascendify run`` is the same launcher with flags.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ascendify.errors import AscendifyError

PROG = "python -m ascendify.davincirun"
HELP_FLAGS = ("-h", "--help")


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] and given[0] in HELP_FLAGS:
        _parser().print_help()
        return 0
    # Options end at the first word: everything from CMD on is the command, whatever it holds.
    command = tuple(given[1:] if given[:1] == ["--"] else given)
    if not command or command[0].startswith("-"):
        parser = _parser()
        reason = (
            f"{command[0]}: takes no options (the platform's environment gives them; "
            "`ascendify run` takes them as flags)"
            if command
            else "CMD is missing"
        )
        parser.error(reason)  # exits 2
    from ascendify.commands.run import launch
    from ascendify.launch import LaunchOptions

    try:
        return launch(LaunchOptions(command=command, modelarts=True))
    except AscendifyError as error:
        print(f"ascendify.davincirun: error: {error}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    """For the help and usage text only: the command line is read by :func:`main`."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Run CMD ARGS... on every card of this node, ModelArts' way: the node "
        "count, node rank, cards, rank table and job directory come from the platform's "
        "variables (MA_NUM_GPUS, MA_NUM_HOSTS, VC_TASK_INDEX, VC_WORKER_HOSTS, "
        "RANK_TABLE_FILE, MA_JOB_DIR, ...).",
        epilog="`ascendify run --help` shows the same launcher with flags. Put -- before a "
        "CMD that starts with -.",
    )
    parser.add_argument("command", metavar="CMD", help="e.g. python")
    parser.add_argument("args", nargs="*", metavar="ARGS", help="passed through verbatim")
    return parser


if __name__ == "__main__":
    raise SystemExit(main())
