"""The SQLite job store: schema version, WAL, forward-only states, lookups."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import time
from pathlib import Path

import pytest

from ascendify.errors import AscendifyError
from ascendify.jobs.store import SCHEMA_VERSION, JobStore, default_dir

SPEC = {"name": "n", "engine": "local", "nodes": 2, "cards": 4}


def test_database_is_wal_and_versioned(tmp_path: Path) -> None:
    JobStore(tmp_path)
    with sqlite3.connect(tmp_path / "jobs.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    JobStore(tmp_path)
    with sqlite3.connect(tmp_path / "jobs.db") as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(AscendifyError, match="newer than this ascendify understands"):
        JobStore(tmp_path)


def test_a_version_1_store_is_migrated_with_its_jobs(tmp_path: Path) -> None:
    job = JobStore(tmp_path).create(SPEC)
    with sqlite3.connect(tmp_path / "jobs.db") as db:  # as version 1 left it: no attempts column
        db.execute("ALTER TABLE jobs DROP COLUMN attempts")
        db.execute("PRAGMA user_version = 1")
    store = JobStore(tmp_path)
    assert store.get(job.id).attempts == 1
    store.record_attempt(job.id, 2, "attempt 0 ended (exit); restart 1 of 1")
    store.record_attempt(job.id, 2, "seen twice, recorded once")
    assert store.get(job.id).attempts == 2
    assert [(e.state, e.detail) for e in store.events(job.id)][-1] == (
        "restart",
        "attempt 0 ended (exit); restart 1 of 1",
    )
    with sqlite3.connect(tmp_path / "jobs.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2


def test_states_only_move_forward(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    job = store.create(SPEC)
    assert store.transition(job.id, "running")
    assert store.transition(job.id, "failed", exit_code=1, cause="runner lost")
    assert not store.transition(job.id, "succeeded", exit_code=0)
    final = store.get(job.id)
    assert (final.state, final.exit_code, final.cause) == ("failed", 1, "runner lost")
    assert [event.state for event in store.events(job.id)] == ["queued", "running", "failed"]
    assert final.started is not None
    assert final.ended is not None


def test_lookup_by_prefix_and_removal(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    first, second = store.create(SPEC), store.create(SPEC)
    assert store.get(first.id[:6]).id == first.id
    assert [job.id for job in store.jobs()] == [second.id, first.id]
    store.remove(first.id)
    with pytest.raises(AscendifyError, match="no job"):
        store.get(first.id)
    assert store.events(first.id) == []


@pytest.mark.parametrize("pattern", ["%", "_", "____%", "{prefix}_", "{prefix}%"])
def test_wildcards_in_an_id_match_nothing_else(tmp_path: Path, pattern: str) -> None:
    store = JobStore(tmp_path)
    job = store.create(SPEC)
    given = pattern.format(prefix=job.id[:4])
    with pytest.raises(AscendifyError, match=f"no job '{given}'"):
        store.get(given)


def test_a_store_locked_past_the_wait_is_named(tmp_path: Path) -> None:
    JobStore(tmp_path)
    other = sqlite3.connect(tmp_path / "jobs.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process's write that does not end
    store = JobStore(tmp_path, busy_timeout=0.2)
    started = time.monotonic()
    with pytest.raises(
        AscendifyError, match=r"store in .* is locked by another process \(waited 0.2s\)"
    ):
        store.create(SPEC)
    assert time.monotonic() - started < 15  # its 0.2 s, not a wait until the other one ends
    other.execute("ROLLBACK")
    assert store.create(SPEC).state == "queued"  # usable again once the other is done


def test_a_setup_lock_held_past_the_wait_is_named(tmp_path: Path) -> None:
    JobStore(tmp_path)
    held = os.open(tmp_path / "store.setup.lock", os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)  # a process stuck while it opened the store
    try:
        with pytest.raises(AscendifyError, match="is locked by another process"):
            JobStore(tmp_path, busy_timeout=0.2)
    finally:
        os.close(held)
    JobStore(tmp_path, busy_timeout=0.2)


def test_default_dir(tmp_path: Path) -> None:
    assert default_dir({"ASCENDIFY_JOBS_DIR": str(tmp_path)}) == tmp_path
    assert default_dir({"XDG_DATA_HOME": str(tmp_path)}) == tmp_path / "ascendify" / "jobs"
