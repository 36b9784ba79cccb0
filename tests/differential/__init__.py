"""Differential tests: a program and its migration, run, print the same numbers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import HANG_BOUND, ascendify_env


def migrate_folder(source: Path, out: Path, *options: str) -> Path:
    """``ascendify migrate -i source -o out [options]`` (no analysis) run as a user runs it; the
    migrated copy of ``source``."""
    done = subprocess.run(
        [sys.executable, "-m", "ascendify", "migrate", "-i", str(source), "-o", str(out),
         "-j", "1", "--no-analysis", *options],
        env=ascendify_env(), capture_output=True, text=True, timeout=HANG_BOUND, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out / f"{source.name}_msft"
