"""The accelerators' own tools (``npu-smi``, ``nvidia-smi``, ``hccn_tool``), run with a bound.

Low and torch-free: the launcher counts a node's cards with them and the job runner samples the
cards' usage, and neither imports the other for it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Mapping

TOOL_TIMEOUT = 10.0  # seconds: a wedged driver tool must not stall a launch


def tool_output(argv: list[str], env: Mapping[str, str]) -> str | None:
    """What ``argv`` printed, or None when the tool is missing, fails or overruns."""
    if shutil.which(argv[0], path=env.get("PATH")) is None:
        return None
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT, env=dict(env), check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def npu_smi_ids(env: Mapping[str, str]) -> tuple[list[str], str] | None:
    """The Ascend cards ``npu-smi`` lists and how we know, or None when it lists none."""
    output = tool_output(["npu-smi", "info", "-l"], env)
    ids = re.findall(r"NPU ID\s*:\s*(\d+)", output or "")
    return (ids, f"{len(ids)} Ascend devices listed by npu-smi") if ids else None
