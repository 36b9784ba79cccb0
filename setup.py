"""Ships ``ascendify-auto.pth`` at the top of site-packages, next to the package, by a normal
install and by an editable one alike.

Python runs ``.pth`` lines that start with ``import`` at interpreter start; ours costs one
environment lookup and enables the runtime redirect only when ``ASCENDIFY_AUTO=1`` (see docs/auto.md).
Everything else about the build is in pyproject.toml.
"""

from __future__ import annotations

import os

from setuptools import setup
from setuptools.command.build_py import build_py

HOOK = "ascendify-auto.pth"


class BuildPyWithHook(build_py):
    def run(self) -> None:
        super().run()
        self.copy_file(
            os.path.join("src", "ascendify", HOOK),
            os.path.join(self._hook_dir(), HOOK),
            preserve_mode=False,
        )

    def _hook_dir(self) -> str:
        """The top of the wheel being built.

        An editable install (``pip install -e .``) builds its wheel from what the install
        command writes, not from ``build_lib`` (its modules stay in src/), so the hook goes there.
        """
        if getattr(self, "editable_mode", False):
            return str(self.get_finalized_command("install").install_lib)
        return str(self.build_lib)


setup(cmdclass={"build_py": BuildPyWithHook})
