"""Command-line entry point: parse argv, hand over to the library, return an exit code.

Subcommands live one per module in :mod:`ascendify.commands` and are discovered, never
hand-listed. Each module exposes ``NAME``, ``HELP``, ``add_arguments(parser)`` and
``run(args) -> int``. Command modules import their library lazily so that
``ascendify --help`` and the launcher start fast (no torch import), and a command's
``add_arguments`` runs only when that command is the one run (or its help is shown): ``migrate``
finds its mode options in the rule registry, which the other commands must not pay for.

Exit codes: 0 success, 1 findings or changes (``--check``) or a failed job, 2 usage or input errors
(one line naming the input and the problem), 3 an internal error, 130 interrupted, 141 when the
reader of the output went away (``| head``), quietly. Set the environment variable
``ASCENDIFY_DEBUG=1`` to get the traceback of an error instead of its one line.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, Protocol, cast

from ascendify import __version__, commands
from ascendify._fs import shown
from ascendify.errors import AscendifyError

DEBUG_VARIABLE = "ASCENDIFY_DEBUG"
INTERNAL_ERROR = 3
BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a writer whose reader went away


class Command(Protocol):
    NAME: str
    HELP: str

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


class _CommandParser(argparse.ArgumentParser):
    """A sub-command's parser that adds its arguments on first use: parsing, help or usage."""

    def __init__(
        self, *, arguments: Callable[[argparse.ArgumentParser], None] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self._arguments = arguments

    def _add_arguments(self) -> None:
        arguments, self._arguments = self._arguments, None
        if arguments is not None:
            arguments(self)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._add_arguments()
        return super().parse_known_args(args, namespace)

    def format_help(self) -> str:
        self._add_arguments()
        return super().format_help()

    def format_usage(self) -> str:
        self._add_arguments()
        return super().format_usage()


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
    subparsers = parser.add_subparsers(
        dest="subcommand", metavar="COMMAND", parser_class=_CommandParser
    )
    for command in _discover_commands():
        sub = subparsers.add_parser(
            command.NAME, help=command.HELP, description=command.HELP,
            arguments=command.add_arguments,
        )  # fmt: skip
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
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        _discard_output()
        return BROKEN_PIPE
    except Exception as error:
        if os.environ.get(DEBUG_VARIABLE, "") not in ("", "0"):
            raise
        return _report(args.subcommand, error)


def _discard_output() -> None:
    """Send what is still buffered to /dev/null: the reader is gone and must not get a traceback."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        os.dup2(devnull, stream.fileno())


def _report(subcommand: str, error: Exception) -> int:
    """One line on stderr instead of a traceback; the exit code for the kind of error."""
    if isinstance(error, AscendifyError):
        message, code = f"error: {error}", 2
    elif isinstance(error, OSError):  # a file or folder of the user's that could not be used
        where = f"{error.filename}: " if error.filename else ""
        message, code = f"error: {where}{error.strerror or error}", 2
    else:
        message = (
            f"internal error: {type(error).__name__}: {error} "
            f"(set {DEBUG_VARIABLE}=1 for the traceback)"
        )
        code = INTERNAL_ERROR
    print(f"ascendify {subcommand}: {shown(message)}", file=sys.stderr)
    return code
