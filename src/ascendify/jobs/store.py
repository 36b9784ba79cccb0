"""Job records in an embedded SQLite database (WAL, schema versioned), one directory per job.

The store lives in ``$ASCENDIFY_JOBS_DIR`` (or the ``--jobs-dir`` flag), else under the user's
data directory. Many processes use it at once (CLI calls, detached job runners): every write is
one short transaction and readers never block writers (WAL). State changes only move forward:
a job that reached a final state keeps it.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ascendify.errors import AscendifyError

SCHEMA_VERSION = 2
DB_NAME = "jobs.db"
ENV_VARIABLE = "ASCENDIFY_JOBS_DIR"
ACTIVE = ("queued", "running", "stopping")
FINAL = ("succeeded", "failed", "stopped")
RUNNER_LOST = "runner lost"
BUSY_TIMEOUT = 30.0  # seconds a command waits for another process's write to end
_SETUP_LOCK = "store.setup.lock"  # held while a process checks or creates the schema

# What takes a store of the version before each one to it (a new store is made from _SCHEMA).
_MIGRATIONS = {
    2: ("ALTER TABLE jobs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 1",),  # restarts
}
_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    engine TEXT NOT NULL,
    nodes INTEGER NOT NULL,
    cards INTEGER NOT NULL,
    state TEXT NOT NULL,
    cause TEXT,
    exit_code INTEGER,
    created REAL NOT NULL,
    started REAL,
    ended REAL,
    spec TEXT NOT NULL,
    runner_pid INTEGER,
    runner_started REAL,
    rerun_of TEXT,
    attempts INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS jobs_by_created ON jobs (created);
CREATE INDEX IF NOT EXISTS jobs_by_state ON jobs (state);
CREATE TABLE IF NOT EXISTS events (
    job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    time REAL NOT NULL,
    state TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS events_by_job ON events (job_id);
CREATE TABLE IF NOT EXISTS nodes (
    job_id TEXT NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    node INTEGER NOT NULL,
    address TEXT NOT NULL,
    pid INTEGER,
    pid_started REAL,
    exit_code INTEGER,
    PRIMARY KEY (job_id, node)
);
"""


@dataclass(frozen=True)
class JobRecord:
    id: str
    name: str
    engine: str
    nodes: int
    cards: int
    state: str
    cause: str | None
    exit_code: int | None
    created: float
    started: float | None
    ended: float | None
    spec_json: str
    runner_pid: int | None
    runner_started: float | None
    rerun_of: str | None
    attempts: int  # 1 + the restarts of the job so far

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    @cached_property
    def spec(self) -> dict[str, Any]:
        """The stored spec, parsed when asked for (``job list`` never needs it)."""
        parsed: dict[str, Any] = json.loads(self.spec_json)
        return parsed


@dataclass(frozen=True)
class NodeRecord:
    node: int
    address: str
    pid: int | None
    pid_started: float | None
    exit_code: int | None


@dataclass(frozen=True)
class Event:
    time: float
    state: str
    detail: str


def default_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$ASCENDIFY_JOBS_DIR``, else the platform's per-user data directory."""
    env = os.environ if env is None else env
    if env.get(ENV_VARIABLE):
        return Path(env[ENV_VARIABLE]).expanduser()
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    elif sys.platform == "win32":
        base = Path(env.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    else:
        base = Path(env.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "ascendify" / "jobs"


class StoreBusy(sqlite3.OperationalError):
    """Another process held the store longer than the busy timeout."""


@contextmanager
def _one_process_at_a_time(lock: Path, timeout: float) -> Iterator[None]:
    """Hold an exclusive lock on ``lock`` (created if needed) across processes. SQLite does not wait
    for a busy database while switching it to WAL: twenty commands opening a new store at once
    failed with "database is locked" without this. Waits at most ``timeout`` seconds for it."""
    descriptor = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)  # freed when closed
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise StoreBusy(f"{lock} is held by another process") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(descriptor)


class StoreUnwritable(AscendifyError):
    """The store can be read but not written: its disk is full or failing."""


# SQLite's words for a write the disk refused (SQLITE_FULL, SQLITE_IOERR, SQLITE_READONLY).
_UNWRITABLE = ("full", "disk i/o error", "readonly")


@contextmanager
def _problems_are_named(root: Path, timeout: float) -> Iterator[None]:
    """A store another process keeps locked past the wait, or one on a full disk, is an error
    naming it, not a traceback."""
    try:
        yield
    except sqlite3.OperationalError as error:
        if isinstance(error, StoreBusy) or "locked" in str(error):
            raise AscendifyError(
                f"the job store in {root} is locked by another process (waited {timeout:g}s): "
                "try again when it is done"
            ) from None
        if any(words in str(error).lower() for words in _UNWRITABLE):
            raise StoreUnwritable(f"the job store in {root} cannot be written: {error}") from None
        raise


class JobStore:
    """The database and the job directories below ``root``."""

    def __init__(self, root: Path, busy_timeout: float = BUSY_TIMEOUT) -> None:
        self.root = root.absolute()
        self.busy_timeout = busy_timeout
        self._lock = threading.RLock()
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            self._db = self._open()
            with (
                _problems_are_named(self.root, busy_timeout),
                _one_process_at_a_time(self.root / _SETUP_LOCK, busy_timeout),
            ):
                self._migrate()
        except (OSError, sqlite3.Error) as error:
            raise AscendifyError(f"cannot open the job store in {self.root}: {error}") from None

    def job_dir(self, job_id: str) -> Path:
        return self.root / job_id

    @contextmanager
    def _connect(self, write: bool = False) -> Iterator[sqlite3.Connection]:
        """The store's one connection (threads take turns); a write is one IMMEDIATE transaction."""
        with self._lock, _problems_are_named(self.root, self.busy_timeout):
            if not write:
                yield self._db
                return
            self._db.execute("BEGIN IMMEDIATE")  # the write lock now: no upgrade deadlocks
            try:
                yield self._db
                self._db.execute("COMMIT")  # may fail too (a full disk): then roll back as well
            except BaseException:
                with suppress(sqlite3.Error):  # the transaction may be gone already
                    self._db.execute("ROLLBACK")
                raise

    def _open(self) -> sqlite3.Connection:
        # Autocommit mode: transactions are explicit. One connection for the store's lifetime:
        # closing the last one checkpoints the WAL, an fsync per command.
        db = sqlite3.connect(
            self.root / DB_NAME,
            timeout=self.busy_timeout,
            isolation_level=None,
            check_same_thread=False,
        )
        db.execute("PRAGMA foreign_keys = ON")
        # WAL's usual setting: a crash of any process loses nothing; only a power cut may lose
        # the last transactions. Spares an fsync per write (submit latency).
        db.execute("PRAGMA synchronous = NORMAL")
        return db

    def _migrate(self) -> None:
        db = self._db
        if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            db.execute("PRAGMA journal_mode = WAL")  # persistent: set once per database
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise AscendifyError(
                f"the job store in {self.root} has schema {version}, newer than this "
                f"ascendify understands ({SCHEMA_VERSION}): upgrade ascendify"
            )
        with self._connect(write=True):
            if version:  # an older store: brought up one version at a time, its jobs kept
                for newer in range(version + 1, SCHEMA_VERSION + 1):
                    for statement in _MIGRATIONS[newer]:
                        db.execute(statement)
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)  # every statement is idempotent
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    # -- writes --------------------------------------------------------------------------------

    def create(self, spec: Mapping[str, Any], rerun_of: str | None = None) -> JobRecord:
        job_id = uuid.uuid4().hex[:12]
        now = time.time()
        with self._connect(write=True) as db:
            db.execute(
                "INSERT INTO jobs (id, name, engine, nodes, cards, state, created, spec, rerun_of)"
                " VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?)",
                (
                    job_id,
                    spec["name"],
                    spec["engine"],
                    spec["nodes"],
                    spec["cards"],
                    now,
                    json.dumps(spec),
                    rerun_of,
                ),
            )
            db.execute("INSERT INTO events VALUES (?, ?, 'queued', '')", (job_id, now))
            row = db.execute("SELECT * FROM jobs WHERE id = ?", (job_id,)).fetchone()
        return _record(row)

    def set_runner(self, job_id: str, pid: int, started: float) -> None:
        with self._connect(write=True) as db:
            db.execute(
                "UPDATE jobs SET runner_pid = ?, runner_started = ? WHERE id = ?",
                (pid, started, job_id),
            )

    def set_node(self, job_id: str, node: NodeRecord) -> None:
        with self._connect(write=True) as db:
            db.execute(
                "INSERT OR REPLACE INTO nodes VALUES (?, ?, ?, ?, ?, ?)",
                (job_id, node.node, node.address, node.pid, node.pid_started, node.exit_code),
            )

    def transition(
        self,
        job_id: str,
        state: str,
        detail: str = "",
        *,
        exit_code: int | None = None,
        cause: str | None = None,
    ) -> bool:
        """Move an active job to ``state``; False when it had already ended (nothing changes)."""
        now = time.time()
        with self._connect(write=True) as db:
            changed = db.execute(
                f"UPDATE jobs SET state = ?, cause = COALESCE(?, cause),"
                f" exit_code = COALESCE(?, exit_code),"
                f" started = CASE WHEN ? = 'running' THEN COALESCE(started, ?) ELSE started END,"
                f" ended = CASE WHEN ? IN {FINAL} THEN ? ELSE ended END"
                f" WHERE id = ? AND state IN {ACTIVE}",
                (state, cause, exit_code, state, now, state, now, job_id),
            ).rowcount
            if changed:
                db.execute("INSERT INTO events VALUES (?, ?, ?, ?)", (job_id, now, state, detail))
        return bool(changed)

    def record_attempt(self, job_id: str, attempts: int, detail: str) -> None:
        """The job is on its ``attempts``-th attempt: a ``restart`` event says why."""
        with self._connect(write=True) as db:
            changed = db.execute(
                "UPDATE jobs SET attempts = ? WHERE id = ? AND attempts < ?",
                (attempts, job_id, attempts),
            ).rowcount
            if changed:
                db.execute(
                    "INSERT INTO events VALUES (?, ?, 'restart', ?)", (job_id, time.time(), detail)
                )

    def remove(self, job_id: str) -> None:
        with self._connect(write=True) as db:
            db.execute("DELETE FROM jobs WHERE id = ?", (job_id,))

    # -- reads ---------------------------------------------------------------------------------

    def get(self, job_id: str) -> JobRecord:
        with self._connect() as db:  # a prefix compared as text: '%' and '_' are no wildcards
            rows = db.execute(
                "SELECT * FROM jobs WHERE id = ? OR substr(id, 1, ?) = ? LIMIT 2",
                (job_id, len(job_id), job_id),
            ).fetchall()
        exact = [row for row in rows if row[0] == job_id]
        if exact or len(rows) == 1:
            return _record(exact[0] if exact else rows[0])
        if not rows:
            raise AscendifyError(f"no job {job_id!r} in {self.root}")
        raise AscendifyError(f"job id {job_id!r} is ambiguous: give more of it")

    def jobs(self, states: tuple[str, ...] | None = None) -> list[JobRecord]:
        """Jobs, newest first; only those in ``states`` when given."""
        query = "SELECT * FROM jobs"
        if states is not None:
            query += f" WHERE state IN ({', '.join('?' * len(states))})"
        with self._connect() as db:
            rows = db.execute(query + " ORDER BY created DESC", states or ()).fetchall()
        return [_record(row) for row in rows]

    def events(self, job_id: str) -> list[Event]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT time, state, detail FROM events WHERE job_id = ? ORDER BY rowid", (job_id,)
            ).fetchall()
        return [Event(*row) for row in rows]

    def nodes(self, job_id: str) -> list[NodeRecord]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT node, address, pid, pid_started, exit_code FROM nodes"
                " WHERE job_id = ? ORDER BY node",
                (job_id,),
            ).fetchall()
        return [NodeRecord(*row) for row in rows]


def _record(row: tuple[Any, ...]) -> JobRecord:
    return JobRecord(*row)
