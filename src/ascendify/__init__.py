"""ascendify: take PyTorch GPU training projects to Ascend NPUs and run them as training jobs."""

from __future__ import annotations

from ascendify.heartbeat import heartbeat
from ascendify.savenow import save_requested, saving

__version__ = "0.1.0"
__all__ = ["heartbeat", "save_requested", "saving"]
