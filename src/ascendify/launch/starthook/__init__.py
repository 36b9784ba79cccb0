"""The folder the launcher puts first on the ranks' ``PYTHONPATH`` when hangs are watched for.

It holds a ``sitecustomize`` module, which Python imports at start-up: see there.
"""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).parent
STACKS_VARIABLE = "ASCENDIFY_STACKS_DIR"
