"""Ports for the master rank and the rendezvous store (below the launcher's other modules)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A TCP port free on every interface right now (the master rank binds it moments later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("", 0))
        return int(probe.getsockname()[1])
