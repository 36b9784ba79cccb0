"""How every view writes a moment: ISO 8601 in UTC, with the zone (the CLI, the API, the page)."""

from __future__ import annotations

from datetime import datetime, timezone


def iso_time(stamp: float, *, milliseconds: bool = False) -> str:
    """``2025-10-11T15:09:02+00:00``; with ``milliseconds``, ``...02.125+00:00`` (the order of
    ranks that failed within one second)."""
    spec = "milliseconds" if milliseconds else "seconds"
    return datetime.fromtimestamp(stamp, timezone.utc).isoformat(timespec=spec)
