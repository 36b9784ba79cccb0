"""Where ascendify keeps what belongs to the user rather than to a project: run logs, the demo.

Nothing goes into the current folder by default: that is usually the project, and the next
``migrate`` would copy it into the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def cache_dir(env: Mapping[str, str]) -> Path:
    """``$XDG_CACHE_HOME/ascendify``, else ``~/.cache/ascendify`` (a relative value is ignored)."""
    configured = env.get("XDG_CACHE_HOME", "")
    base = Path(configured) if Path(configured).is_absolute() else Path.home() / ".cache"
    return base / "ascendify"
