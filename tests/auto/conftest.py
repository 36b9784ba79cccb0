from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture
def cpu_redirect() -> Iterator[str]:
    """The redirect enabled for the CPU in this process, with its own environment, then reverted."""
    from ascendify import auto

    choice = auto.enable("cpu", environ={"RANK": "1"})
    try:
        yield choice.device
    finally:
        auto.disable()
