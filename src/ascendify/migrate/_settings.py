"""The settings of a migration run that decide how each file is migrated."""

from __future__ import annotations

from dataclasses import dataclass, field

from ascendify._fs import MAX_SOURCE_BYTES
from ascendify.migrate._modes import Modes
from ascendify.migrate._project import ProjectNames
from ascendify.targets import DEFAULT_VERSION


@dataclass(frozen=True)
class Settings:
    """Picklable: it crosses process boundaries. Checkers see it as ``Context.settings``."""

    torch_npu_version: str = DEFAULT_VERSION
    max_bytes: int = MAX_SOURCE_BYTES  # larger files are copied unchanged and reported
    select: frozenset[str] | None = None  # rule codes to run; None runs every rule
    enabled: frozenset[str] = frozenset()  # codes of opt-in rules to run as well
    modes: Modes = field(default_factory=Modes)  # target and modes (ascendify.migrate._modes)
    # The torch names the project's own modules export (``from utils import *``), for the tree.
    project: ProjectNames = field(default_factory=ProjectNames)


DEFAULT_SETTINGS = Settings()
