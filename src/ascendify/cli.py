"""Command-line entry point: parse argv, hand over to the library, return an exit code.

Subcommands live one per module in :mod:`ascendify.commands` and are discovered, never
hand-listed. Each module exposes ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``. Command modules import their library lazily so that
``ascendify --help`` and the launcher start fast (no torch import).

Exit codes: 0 success, 1 findings or changes (``--check``) or a failed job, 2 usage or input errors,
141 when the reader of the output went away (``| head``), quietly.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Protocol, cast

from ascendify import __version__, commands
from ascendify.errors import AscendifyError

BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a writer whose reader went away


class Command(Protocol):
    NAME: str
    HELP: str

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


def _discover_commands() -> list[Command]:
    found: list[Command] = []
    for info in pkgutil.iter_modules(commands.__path__):
        module: ModuleType = importlib.import_module(f"{commands.__name__}.{info.name}")
        if hasattr(module, "NAME"):
            found.append(cast(Command, module))
    return sorted(found, key=lambda command: command.NAME)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ascendify",
        description="Migrate PyTorch GPU projects to Ascend NPUs and run them as training jobs.",
    )
    parser.add_argument("--version", action="version", version=f"ascendify {__version__}")
    subparsers = parser.add_subparsers(dest="subcommand", metavar="COMMAND")
    for command in _discover_commands():
        sub = subparsers.add_parser(command.NAME, help=command.HELP, description=command.HELP)
        command.add_arguments(sub)
        sub.set_defaults(handler=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.subcommand is None:
        parser.print_help()
        return 2
    try:
        code = int(args.handler(args))
        sys.stdout.flush()  # a reader that went away (`| head`) shows here, not at interpreter exit
        return code
    except AscendifyError as error:
        print(f"ascendify {args.subcommand}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        _discard_output()
        return BROKEN_PIPE


def _discard_output() -> None:
    """Send what is still buffered to /dev/null: the reader is gone and must not get a traceback."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        os.dup2(devnull, stream.fileno())
