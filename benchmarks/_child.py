"""What the benchmarks that time each mode in a fresh Python process share.

A fresh process per run keeps one mode's page cache, allocator and imports from helping the next;
the child prints its figures as one JSON object.
"""

from __future__ import annotations

import json
import subprocess
import sys


def child_figures(code: str, *args: str) -> dict[str, float | str]:
    """Run ``code`` (``python -c``) with ``args``; the JSON object it printed."""
    output = subprocess.run(
        [sys.executable, "-c", code, *args], check=True, capture_output=True, text=True
    ).stdout
    figures: dict[str, float | str] = json.loads(output)
    return figures


def load_text(averages: tuple[float, float, float]) -> str:
    """The machine's load averages (1, 5, 15 minutes) as a benchmark line quotes them."""
    return " ".join(f"{value:.2f}" for value in averages)
