"""The test-only torch_npu stand-in (see README.md): run programs under it in child processes."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

SITE = Path(__file__).resolve().parent / "site"


def standin_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with the stand-in first on PYTHONPATH, so
    that ``import torch_npu`` in a child Python imports the stand-in."""
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SITE), env.get("PYTHONPATH")]))
    return env
