"""The folder ``--profile`` puts first on the ranks' ``PYTHONPATH``, and what it tells them.

It holds a ``sitecustomize`` module, which Python imports at start-up in every process of the job
(a nested launcher's workers, spawned processes); see there. Torch-free: the launcher imports this.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from ascendify.errors import AscendifyError

FOLDER = Path(__file__).parent
DIR_VARIABLE = "ASCENDIFY_PROFILE_DIR"  # the run's profile/ folder: each rank writes rank_<r>/
STEPS_VARIABLE = "ASCENDIFY_PROFILE_STEPS"  # FIRST-LAST, both included, counted from 0
DEFAULT_STEPS = "5-8"  # four steps after five of warm-up (allocator, caches, compilation)
_STEPS = re.compile(r"(\d+)(?:-(\d+))?")


def parse_steps(text: str) -> tuple[int, int]:
    """``5-8`` -> (5, 8); ``7`` -> (7, 7)."""
    found = _STEPS.fullmatch(text.strip())
    if found is None:
        raise AscendifyError(f"--profile {text!r}: give steps as FIRST-LAST (e.g. 5-8) or one step")
    first = int(found.group(1))
    last = int(found.group(2)) if found.group(2) is not None else first
    if last < first:
        raise AscendifyError(f"--profile {text}: the last step comes before the first")
    return first, last


def is_steps(text: str) -> bool:
    return _STEPS.fullmatch(text.strip()) is not None


def profile_environment(
    profile_dir: Path, steps: str, inherited: Mapping[str, str]
) -> dict[str, str]:
    """The variables that make every Python process of a job profile ``steps`` into ``profile_dir``,
    given the environment they start from (its ``PYTHONPATH`` is extended, not replaced)."""
    parse_steps(steps)
    path = [str(FOLDER), str(FOLDER.parents[2])]  # the hook, and this ascendify importable
    inherited_path = inherited.get("PYTHONPATH")
    return {
        DIR_VARIABLE: str(profile_dir.absolute()),
        STEPS_VARIABLE: steps,
        "PYTHONPATH": os.pathsep.join([*path, *([inherited_path] if inherited_path else [])]),
    }
