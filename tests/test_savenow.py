"""ascendify.savenow: the save-now request and saves renamed into place once complete."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from ascendify import save_requested, saving
from ascendify.savenow import SAVE_NOW_VARIABLE, request_save


@pytest.fixture
def sigterm_restored() -> Iterator[None]:
    previous = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, previous)


def test_a_complete_save_replaces_the_checkpoint_in_one_step(tmp_path: Path) -> None:
    final = tmp_path / "ckpt.pt"
    final.write_text("step 1")
    with saving(final) as part:
        part.write_text("step 2")
        assert final.read_text() == "step 1"  # the old one stays whole while the new is written
        assert part.parent == tmp_path
    assert final.read_text() == "step 2"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.pt"]


def test_a_save_that_fails_leaves_the_last_checkpoint_and_no_part(tmp_path: Path) -> None:
    final = tmp_path / "ckpt.pt"
    final.write_text("step 1")

    def torn_save() -> None:
        with saving(final) as part:
            part.write_text("ste")
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        torn_save()
    assert final.read_text() == "step 1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.pt"]


def test_the_launchers_file_requests_a_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sigterm_restored: None
) -> None:
    env = {SAVE_NOW_VARIABLE: str(tmp_path / "save_now" / "attempt_0" / "rank_0")}
    monkeypatch.setenv(SAVE_NOW_VARIABLE, env[SAVE_NOW_VARIABLE])
    assert save_requested() is False
    request_save(env)
    assert save_requested() is True


def test_sigterm_after_the_first_call_is_a_request_not_the_end(
    monkeypatch: pytest.MonkeyPatch, sigterm_restored: None
) -> None:
    monkeypatch.delenv(SAVE_NOW_VARIABLE, raising=False)
    save_requested()  # installs the handler
    os.kill(os.getpid(), signal.SIGTERM)
    assert save_requested() is True
