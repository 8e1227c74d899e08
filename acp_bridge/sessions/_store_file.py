"""The session store's file: opening `sessions.sqlite3`, closing it with every commit on disk,
and the statement and transaction helpers whose SQLite errors become `SessionStoreError`.

`StoreConnection` is the base of `SessionStore`; the session rows (`_session_table`) and the
turn rows (`_store`) build on it. See `_store` for what is durable when.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from acp_bridge.sessions._records import SessionStoreError
from acp_bridge.sessions._schema import FILENAME as SCHEMA_FILENAME
from acp_bridge.sessions._schema import connect, transaction
from acp_bridge.turn import StoreFileProblem, file_problem

__all__ = ["CHECKPOINT_EVERY", "StoreConnection"]

CHECKPOINT_EVERY = 400
"""Write transactions between two checkpoints of the store's own (a text turn writes four, a
few pages each: about SQLite's default cadence of 1000 pages)."""


class StoreConnection:
    """One connection to the session database of a state directory (None: in memory)."""

    FILENAME = "sessions.sqlite3"

    def __init__(self, state_dir: Path | str | None, *, busy_timeout: float = 5.0) -> None:
        if state_dir is None:
            self.path: Path | None = None
        else:
            directory = Path(state_dir)
            try:
                directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            except OSError as error:
                raise SessionStoreError(f"cannot create {directory}: {error}") from error
            self.path = directory / self.FILENAME
        self._db = connect(self.path, busy_timeout=busy_timeout)
        self._writes = 0  # write transactions since the last `checkpoint_if_due`

    def close(self) -> None:
        """Closes the database, with every commit on disk (SESS-001)."""
        try:
            self._sync_wal()
        finally:
            self._db.close()

    def checkpoint_if_due(self) -> None:
        """Copies the write-ahead log into the database once this connection has committed
        `CHECKPOINT_EVERY` writes since it last did (SQLite's own automatic checkpoint, which
        would run inside whichever commit crossed its limit, a turn's end included, waits for
        `AUTOCHECKPOINT_PAGES`). Called where nothing waits: after a prompt's response is
        written (issue 15.2). PASSIVE: it never waits for another process's readers or
        writer; what it cannot copy now is copied by a later one."""
        if self._writes < CHECKPOINT_EVERY or self.path is None:
            return
        self._writes = 0
        try:
            self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error as error:
            raise SessionStoreError(f"session store: {error}") from error

    def _sync_wal(self) -> None:
        if self.path is None:
            return
        try:
            fd = os.open(f"{self.path}-wal", os.O_RDONLY)
        except FileNotFoundError:
            return  # checkpointed and removed: nothing is pending
        except OSError as error:
            raise SessionStoreError(f"cannot sync {self.path}-wal: {error}") from error
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _execute(self, sql: str, parameters: Sequence[Any] = ()) -> sqlite3.Cursor:
        try:
            return self._db.execute(sql, parameters)
        except sqlite3.Error as error:
            raise SessionStoreError(f"session store: {error}") from error

    def _write(
        self, *, durable: bool = False
    ) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        self._writes += 1
        return _writing(self._db, durable)


@contextlib.contextmanager
def _writing(db: sqlite3.Connection, durable: bool) -> Iterator[sqlite3.Connection]:
    """A write transaction whose SQLite errors become `SessionStoreError`."""
    try:
        with transaction(db, durable=durable):
            yield db
    except sqlite3.Error as error:
        raise SessionStoreError(f"session store: {error}", _file_trouble(error)) from error


def _file_trouble(error: sqlite3.Error) -> StoreFileProblem | None:
    """A write that failed for the file's sake (a full disk, a read-only or damaged file) names
    the file and the fix (EFFECT-OPEN-001); other failures stay `session_store_unavailable`."""
    problem = file_problem(error, SCHEMA_FILENAME, "its session store")
    return problem if problem.problem in ("full", "read_only", "corrupt") else None
