"""The agent's link to the rendezvous store, in this process: a real TCPStore on loopback."""

from __future__ import annotations

import gc
import os
import threading
import time
from pathlib import Path

import pytest
import torch.distributed as dist

from ascendify.launch import LaunchOptions, resolve_spec, storelink
from ascendify.launch.ports import free_port
from tests.conftest import HANG_BOUND

NOBODY = "127.0.0.9"  # a loopback address nothing listens on


def _beating() -> bool:
    return any(thread.name == "ascendify-beat" for thread in threading.enumerate())


def test_closing_the_link_waits_for_a_move_in_flight(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # At a job's end node 0 closes the store and exits; a node whose last beat failed is then
    # moving the store while its launcher exits. Its beat thread, left inside the store's C++
    # client as the interpreter finalised, aborted the launcher (exit -6 after every rank
    # succeeded). close() must not return while the beat thread still runs.
    monkeypatch.setattr(storelink, "NODE_LOST_AFTER", 1.0)  # a move's waits, shortened
    port = free_port()
    host = dist.TCPStore("127.0.0.1", port, is_master=True, wait_for_workers=False)  # type: ignore[attr-defined]
    options = LaunchOptions(
        command=("python",), nnodes=3, node_rank=2, master_addr="127.0.0.1", master_port=port,
        log_dir=tmp_path,
    )  # fmt: skip
    link = storelink.StoreLink(resolve_spec(options, {"PATH": os.environ["PATH"]}))
    link.remember({0: "127.0.0.1", 1: NOBODY, 2: "127.0.0.1"}, host=0)
    deadline = time.monotonic() + HANG_BOUND
    while int(host.add(storelink.beat_key(2), 0)) == 0:
        assert time.monotonic() < deadline, "node 2 never beat"
        time.sleep(0.05)
    del host  # node 0 is gone: the next beat fails and node 2 looks for node 1, which is silent
    gc.collect()
    time.sleep(2 * storelink.BEAT_INTERVAL)  # the beat failed: the move is under way
    link.close()
    assert not _beating()
