"""The session database: opening it (WAL, busy timeout, `synchronous=NORMAL` with durable
commits where SESS-001 needs them) and migrating it.

The schema version is SQLite's `PRAGMA user_version`. `MIGRATIONS[n - 1]` takes a database
from version n - 1 to n; each runs in its own `BEGIN IMMEDIATE` transaction together with
the version bump, so two processes opening an old database at once migrate it once, and a
crash mid-migration leaves the previous version intact (SESS-003). A database newer than
this code is refused, never written.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

from acp_bridge.sessions._records import SessionStoreError
from acp_bridge.turn import file_problem, newer_schema

__all__ = [
    "AUTOCHECKPOINT_PAGES",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "connect",
    "migrate",
    "transaction",
]

AUTOCHECKPOINT_PAGES = 8000
"""SQLite checkpoints by itself only once the write-ahead log holds this many pages (32 MB at
4 KiB: its default is 1000); before that the store does, off the turn's tail."""


def _v1_tables(db: sqlite3.Connection) -> None:
    """Sessions, their turns, the kept conversation and the tool calls shown."""
    db.execute(
        """CREATE TABLE sessions (
            session_id TEXT PRIMARY KEY,
            cwd TEXT NOT NULL,
            additional_directories TEXT NOT NULL DEFAULT '[]',
            mode TEXT NOT NULL,
            model TEXT NOT NULL,
            title TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            owner_pid INTEGER,
            owner_started TEXT,
            owner_token TEXT,
            heartbeat_at REAL
        )"""
    )
    db.execute(
        """CREATE TABLE turns (
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            ordinal INTEGER NOT NULL,
            turn_id TEXT NOT NULL,
            id_prefix TEXT NOT NULL,
            state TEXT NOT NULL
                CHECK (state IN ('running', 'completed', 'failed', 'interrupted')),
            superseded INTEGER NOT NULL DEFAULT 0,
            prompt TEXT NOT NULL,
            stop_reason TEXT,
            note TEXT,
            started_at REAL NOT NULL,
            ended_at REAL,
            PRIMARY KEY (session_id, seq)
        )"""
    )
    db.execute(
        """CREATE TABLE messages (
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            turn_seq INTEGER NOT NULL,
            model_call INTEGER,
            attempt INTEGER,
            body TEXT NOT NULL,
            display TEXT,
            PRIMARY KEY (session_id, seq)
        )"""
    )
    db.execute(
        """CREATE TABLE tool_calls (
            session_id TEXT NOT NULL,
            tool_call_id TEXT NOT NULL,
            turn_seq INTEGER NOT NULL,
            model_call INTEGER NOT NULL,
            position INTEGER NOT NULL,
            title TEXT NOT NULL,
            kind TEXT NOT NULL,
            status TEXT NOT NULL,
            content TEXT NOT NULL,
            locations TEXT NOT NULL,
            raw_input TEXT,
            raw_output TEXT,
            effect_key TEXT,
            updated_at REAL NOT NULL,
            PRIMARY KEY (session_id, tool_call_id)
        )"""
    )


def _v2_mcp_servers_and_listing(db: sqlite3.Connection) -> None:
    """The MCP servers an editor passed (recorded, secrets left out) and the list indexes."""
    db.execute("ALTER TABLE sessions ADD COLUMN mcp_servers TEXT NOT NULL DEFAULT '[]'")
    db.execute("CREATE INDEX sessions_by_update ON sessions (updated_at DESC, session_id DESC)")
    db.execute("CREATE INDEX sessions_by_cwd ON sessions (cwd, updated_at DESC, session_id DESC)")


def _v3_answered(db: sqlite3.Connection) -> None:
    """Whether a completed turn's response was written (SESS-UNANSWERED-001)."""
    db.execute("ALTER TABLE turns ADD COLUMN answered INTEGER NOT NULL DEFAULT 1")


def _v4_usage(db: sqlite3.Connection) -> None:
    """The session's last usage_update, replayed by session/load (USAGE-006)."""
    db.execute("ALTER TABLE sessions ADD COLUMN usage TEXT")


def _v5_compaction_records(db: sqlite3.Connection) -> None:
    """`messages` may hold compaction records (COMPACT-005), which an older bridge would
    misread as conversation: hence the version. The index finds a session's last one."""
    db.execute(
        "CREATE INDEX messages_compactions ON messages (session_id, seq)"
        ' WHERE substr(body, 1, 20) = \'{"type":"compaction"\''
    )


def _v6_turn_indexes(db: sqlite3.Connection) -> None:
    """A turn's messages and tool calls found by its row number: `session/load` reads a page
    of turns with range queries on these, so a page costs its own rows, not the session's
    (issue 15.3, PERF-LOAD-002)."""
    db.execute("CREATE INDEX messages_by_turn ON messages (session_id, turn_seq, seq)")
    db.execute("CREATE INDEX tool_calls_by_turn ON tool_calls (session_id, turn_seq, position)")


def _v7_turn_usage(db: sqlite3.Connection) -> None:
    """The session's last usage_update as a completed turn's end kept it (USAGE-006): the
    turn's end writes its own row only, and the sessions row takes the usage (and the new
    `updated_at`) once the response is written (STORE4-003). An older bridge would read a
    stale `sessions.usage`: hence the version."""
    db.execute("ALTER TABLE turns ADD COLUMN usage TEXT")


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    _v1_tables,
    _v2_mcp_servers_and_listing,
    _v3_answered,
    _v4_usage,
    _v5_compaction_records,
    _v6_turn_indexes,
    _v7_turn_usage,
)
SCHEMA_VERSION = len(MIGRATIONS)
FILENAME = "sessions.sqlite3"


@contextlib.contextmanager
def transaction(db: sqlite3.Connection, *, durable: bool = False) -> Iterator[sqlite3.Connection]:
    """`BEGIN IMMEDIATE` ... `COMMIT` (the write lock up front, so no deadlock upgrade);
    rolled back on any exception.

    Every commit survives the process being killed once it returns (WAL). A `durable` one is
    also on disk: it commits with `synchronous=FULL`, whose fsync of the WAL covers every
    commit before it too (SESS-001); the others cost no fsync (`synchronous=NORMAL`).
    """
    if durable:
        db.execute("PRAGMA synchronous = FULL")  # not allowed inside the transaction
    try:
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    finally:
        if durable:
            db.execute("PRAGMA synchronous = NORMAL")


def _version(db: sqlite3.Connection) -> int:
    (version,) = db.execute("PRAGMA user_version").fetchone()
    return int(version)


def _refuse_newer(db: sqlite3.Connection) -> int:
    found = _version(db)
    if found > SCHEMA_VERSION:
        raise SessionStoreError(
            f"the session database has schema {found}; this acp-bridge knows "
            f"{SCHEMA_VERSION}. Upgrade acp-bridge or use another --state-dir.",
            newer_schema(FILENAME, "its session store", found, SCHEMA_VERSION),
        )
    return found


def migrate(db: sqlite3.Connection, target: int = SCHEMA_VERSION) -> int:
    """Applies the migrations up to `target`; returns the version found before."""
    found = _refuse_newer(db)
    while (current := _version(db)) < target:
        with transaction(db, durable=True):
            if _version(db) != current:  # another process migrated meanwhile
                continue
            MIGRATIONS[current](db)
            db.execute(f"PRAGMA user_version = {current + 1}")
    return found


def connect(path: Path | None, *, busy_timeout: float) -> sqlite3.Connection:
    """Opens (creating) the database at `path` (None: in memory) and migrates it."""
    target = ":memory:" if path is None else str(path)
    db: sqlite3.Connection | None = None
    try:
        # isolation_level=None: statements autocommit; `transaction` groups the others.
        db = sqlite3.connect(target, timeout=busy_timeout, isolation_level=None)
        db.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        _refuse_newer(db)  # before WAL mode is set: a newer file is never written
        if path is not None:
            db.execute("PRAGMA journal_mode = WAL")
            # SQLite's own checkpoint only as a safety net: the store checkpoints after a
            # response instead, so no commit before one waits for it (`_store_file`).
            db.execute(f"PRAGMA wal_autocheckpoint = {AUTOCHECKPOINT_PAGES}")
        # A commit survives a killed process; `transaction(durable=True)` ones are on disk.
        db.execute("PRAGMA synchronous = NORMAL")
        migrate(db)
    except sqlite3.Error as error:
        if db is not None:
            db.close()
        problem = file_problem(error, FILENAME, "its session store")  # no full path
        raise SessionStoreError(
            f"cannot open the session store {target}: {error}", problem
        ) from error
    except SessionStoreError:
        if db is not None:
            db.close()
        raise
    return db
