"""``ASCENDIFY_AUTO=1``: enable the runtime redirect in every Python process of a job.

A ``.pth`` file in site-packages holding ``HOOK_LINE`` calls :func:`install` when Python starts. The hook
imports nothing heavy: it waits for the program's own ``import torch`` and enables the redirect right
after torch has loaded, so processes that never use torch pay one environment lookup and nothing else.
This module must stay importable without torch (it runs during interpreter start-up).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

AUTO_VARIABLE = "ASCENDIFY_AUTO"
PTH_NAME = "ascendify-auto.pth"
# The site module executes .pth lines that start with "import"; this one stays a single cheap line.
HOOK_LINE = (
    "import os; os.environ.get('ASCENDIFY_AUTO', '0') not in ('', '0') "
    "and __import__('ascendify._autostart')._autostart.install()\n"
)


def install() -> None:
    """Arrange for the redirect to be enabled when torch is first imported."""
    value = os.environ.get(AUTO_VARIABLE, "0")
    if value != "1":
        print(f"ascendify: {AUTO_VARIABLE}={value!r} ignored; only '0' or '1' is supported",
              file=sys.stderr)  # fmt: skip
        return
    if "torch" in sys.modules:
        _enable()
    elif not any(isinstance(finder, _EnableAfterTorch) for finder in sys.meta_path):
        sys.meta_path.insert(0, _EnableAfterTorch())


class _EnableAfterTorch(importlib.abc.MetaPathFinder):
    """Finds torch with the normal finders, and enables the redirect once torch has executed."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "torch":
            return None
        sys.meta_path.remove(self)  # one shot; also keeps the lookup below from finding us again
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        run_torch = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run_torch(module)
            _enable()

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _enable() -> None:
    from ascendify.auto import enable
    from ascendify.errors import AscendifyError

    try:
        enable()
    except AscendifyError as error:
        # Start-up of someone else's program: report and let it run rather than kill it.
        print(f"ascendify.auto: not enabled: {error}", file=sys.stderr)


def write_hook(site_dir: Path) -> Path:
    """Write the ``.pth`` hook into ``site_dir`` (a site-packages directory) and return its path."""
    path = site_dir / PTH_NAME
    path.write_text(HOOK_LINE, encoding="utf-8")
    return path
