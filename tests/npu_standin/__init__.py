"""The test-only torch_npu stand-in (see README.md): run programs under it in child processes."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

SITE = Path(__file__).resolve().parent / "site"


AUTOLOAD = Path(__file__).resolve().parent / "autoload"


def standin_env(base: Mapping[str, str] | None = None, autoload: bool = False) -> dict[str, str]:
    """``base`` (default: this process's environment) with the stand-in first on PYTHONPATH, so
    that ``import torch_npu`` in a child Python imports the stand-in. ``autoload``: also register
    it as a torch device backend, as torch_npu 2.6+ does, so ``import torch`` imports it (code that
    never names torch_npu, such as a portable migration's, then runs on the npu)."""
    env = dict(os.environ if base is None else base)
    paths = [str(SITE), *([str(AUTOLOAD)] if autoload else []), env.get("PYTHONPATH")]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
    return env
