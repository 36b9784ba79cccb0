"""Start-up hooks: act in every Python process of a job right after the program's own ``import torch``.

``ASCENDIFY_AUTO=1``: a ``.pth`` file in site-packages holding ``HOOK_LINE`` calls :func:`install` when
Python starts, which enables the runtime redirect. ``ascendify compare dump`` arms its recorder the same
way (:func:`after_torch_import`), from a ``sitecustomize`` it puts first on the child's ``PYTHONPATH``.
The hook imports nothing heavy: it waits for the program's own ``import torch`` and acts right after
torch has loaded, so processes that never use torch pay one environment lookup and nothing else.
This module must stay importable without torch (it runs during interpreter start-up).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

import ascendify

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
    after_torch_import(_enable)


def after_torch_import(action: Callable[[], None]) -> None:
    """Call ``action`` right after torch has been imported (now, if it has been already)."""
    after_import("torch", action)


def after_import(name: str, action: Callable[[], None]) -> None:
    """Call ``action`` right after the program's own import of the module ``name`` has executed
    it (now, if it has been already). Nothing is imported here: a program that never imports
    ``name`` pays a comparison of each name it imports."""
    if name in sys.modules:
        action()
        return
    waiting = next(
        (f for f in sys.meta_path if isinstance(f, _AfterImport) and f.name == name), None
    )
    if waiting is None:
        waiting = _AfterImport(name)
        sys.meta_path.insert(0, waiting)
    if action not in waiting.actions:
        waiting.actions.append(action)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds one module with the normal finders, and runs its actions once it has executed."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.actions: list[Callable[[], None]] = []

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)  # one shot; also keeps the lookup below from finding us again
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        run_module = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run_module(module)
            for action in self.actions:
                action()

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


def run_hidden_sitecustomize(ours: Path) -> None:
    """Run the ``sitecustomize`` that the one in the folder ``ours`` hides (a distribution's, a
    virtual environment's, another start hook's), as Python would have run it: the next one on
    the path after ours. Only later entries are searched: with several start hooks on the path
    (--profile, --nan-check, --hang-timeout), each runs the one after it, never one before it again."""
    entries = [Path(entry).resolve() if entry else None for entry in sys.path]
    after = entries.index(ours) + 1 if ours in entries else 0
    others = [str(entry) for entry in entries[after:] if entry is not None and entry != ours]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


def write_hook(site_dir: Path) -> Path:
    """Write the ``.pth`` hook into ``site_dir`` (a site-packages directory) and return its path."""
    path = site_dir / PTH_NAME
    path.write_text(HOOK_LINE, encoding="utf-8")
    return path


def child_environment(first_on_path: Sequence[Path] = ()) -> dict[str, str]:
    """Our environment, with this ascendify importable by a child's interpreter (whichever Python the
    user's command starts) and ``first_on_path`` ahead of everything on ``PYTHONPATH``."""
    env = dict(os.environ)
    package_parent = str(Path(ascendify.__file__).resolve().parents[1])
    paths = env.get("PYTHONPATH", "").split(os.pathsep) if env.get("PYTHONPATH") else []
    wanted = [str(path) for path in first_on_path]
    if package_parent not in paths:
        wanted.append(package_parent)
    env["PYTHONPATH"] = os.pathsep.join([*wanted, *(p for p in paths if p not in wanted)])
    return env
