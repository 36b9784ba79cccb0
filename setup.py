"""Ships ``ascendify-auto.pth`` at the top of site-packages, next to the package.

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
            os.path.join(self.build_lib, HOOK),
            preserve_mode=False,
        )


setup(cmdclass={"build_py": BuildPyWithHook})
