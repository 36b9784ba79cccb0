"""``ascendify version``: print the package version (handy in bug reports)."""

from __future__ import annotations

import argparse
import platform

from ascendify import __version__

NAME = "version"
HELP = "Print the ascendify and Python versions."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    del parser  # no options


def run(args: argparse.Namespace) -> int:
    del args
    print(f"ascendify {__version__} (Python {platform.python_version()})")
    return 0
