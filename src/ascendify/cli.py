"""Command-line entry point: parse argv, hand over to the library, return an exit code.

Subcommands live one per module in :mod:`ascendify.commands` and are discovered, never
hand-listed. Each module exposes ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``. Command modules import their library lazily so that
``ascendify --help`` and the launcher start fast (no torch import).

Exit codes: 0 success, 1 findings or changes (``--check``) or a failed job, 2 usage or input errors.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Protocol, cast

from ascendify import __version__, commands
from ascendify.errors import AscendifyError


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
        return int(args.handler(args))
    except AscendifyError as error:
        print(f"ascendify {args.subcommand}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
