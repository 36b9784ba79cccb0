"""ascendify: take PyTorch GPU training projects to Ascend NPUs and run them as training jobs."""

from __future__ import annotations

__version__ = "0.1.0"
