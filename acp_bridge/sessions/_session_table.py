"""The session rows of the store: settings, listing, deletion and ownership (SESS-015, SESS-016).

`SessionTable` adds them to the store's connection; `SessionStore` adds the turns. A session
is owned by one connection at a time; a stale owner (its process gone) is replaced.
"""

from __future__ import annotations

import base64
import binascii
import json
import sqlite3
import time
from collections.abc import Sequence
from typing import Any

from acp_bridge._json import JsonObject
from acp_bridge.sessions._codec import dumps
from acp_bridge.sessions._owner import Owner, owner_alive
from acp_bridge.sessions._records import SessionInUse, SessionNotFound, SessionPage, SessionRecord
from acp_bridge.sessions._store_file import StoreConnection

__all__ = ["PAGE_SIZE", "SessionTable"]

PAGE_SIZE = 50
_SESSION_COLUMNS = (
    "session_id, cwd, additional_directories, mode, model, title, created_at, updated_at,"
    " mcp_servers"
)


class SessionTable(StoreConnection):
    """The `sessions` table: each session's settings, owner and last usage."""

    def create(self, record: SessionRecord, owner: Owner) -> None:
        """Stores a new session, owned by `owner` (on disk when it returns)."""
        with self._write(durable=True) as db:
            db.execute(
                f"INSERT INTO sessions ({_SESSION_COLUMNS}, owner_pid, owner_started,"
                " owner_token, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*_session_values(record), owner.pid, owner.started, owner.token, time.time()),
            )

    def get(self, session_id: str) -> SessionRecord | None:
        row = self._execute(
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE session_id = ?", (session_id,)
        ).fetchone()
        return None if row is None else _session(row)

    def update(
        self,
        session_id: str,
        *,
        cwd: str | None = None,
        additional_directories: Sequence[str] | None = None,
        mode: str | None = None,
        model: str | None = None,
        title: str | None = None,
        mcp_servers: Sequence[JsonObject] | None = None,
    ) -> None:
        """Changes the given fields (None: unchanged)."""
        changes: dict[str, Any] = {
            "cwd": cwd,
            "additional_directories": None
            if additional_directories is None
            else dumps(list(additional_directories)),
            "mode": mode,
            "model": model,
            "title": title,
            "mcp_servers": None if mcp_servers is None else dumps(list(mcp_servers)),
        }
        sets = {k: v for k, v in changes.items() if v is not None}
        if not sets:
            return
        assignments = ", ".join(f"{column} = ?" for column in sets)
        with self._write() as db:
            db.execute(
                f"UPDATE sessions SET {assignments} WHERE session_id = ?",
                (*sets.values(), session_id),
            )

    def list_sessions(
        self, *, cwd: str | None = None, cursor: str | None = None, limit: int = PAGE_SIZE
    ) -> SessionPage:
        """Sessions newest first (last activity), optionally only those in `cwd`.

        `cursor` is the `next_cursor` of the previous page (opaque; ValueError when it is
        not one). Pages are keyset-based, so sessions added meanwhile never repeat one.
        """
        where: list[str] = ["1 = 1"]
        parameters: list[object] = []
        if cwd is not None:
            where.append("cwd = ?")
            parameters.append(cwd)
        if cursor is not None:
            updated_at, session_id = _read_cursor(cursor)
            where.append("(updated_at < ? OR (updated_at = ? AND session_id < ?))")
            parameters.extend([updated_at, updated_at, session_id])
        found = self._execute(
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE {' AND '.join(where)}"
            " ORDER BY updated_at DESC, session_id DESC LIMIT ?",
            (*parameters, limit + 1),
        ).fetchall()
        sessions = tuple(_session(row) for row in found[:limit])
        more = len(found) > limit
        last = sessions[-1] if sessions else None
        next_cursor = _make_cursor(last.updated_at, last.session_id) if more and last else None
        return SessionPage(sessions, next_cursor)

    def delete(self, session_id: str, owner: Owner) -> bool:
        """Deletes the session and everything of it; False when there was none.

        Raises `SessionInUse` when another live connection owns it.
        """
        with self._write() as db:
            if not self._check_owner(db, session_id, owner, allow_free=True):
                return False
            for table in ("tool_calls", "messages", "turns", "sessions"):
                db.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
        return True

    # -- ownership -----------------------------------------------------------------------

    def claim(self, session_id: str, owner: Owner) -> SessionRecord:
        """Makes `owner` the session's owner (SESS-015, SESS-016).

        Raises `SessionNotFound`, or `SessionInUse` when another connection whose process
        still runs owns it. A stale owner (its process is gone) is replaced.
        """
        with self._write() as db:
            self._check_owner(db, session_id, owner, allow_free=True, missing_raises=True)
            db.execute(
                "UPDATE sessions SET owner_pid = ?, owner_started = ?, owner_token = ?,"
                " heartbeat_at = ? WHERE session_id = ?",
                (owner.pid, owner.started, owner.token, time.time(), session_id),
            )
        record = self.get(session_id)
        assert record is not None
        return record

    def release(self, session_id: str, owner: Owner) -> None:
        """Gives the session up if `owner` holds it (idempotent)."""
        with self._write() as db:
            db.execute(
                "UPDATE sessions SET owner_pid = NULL, owner_started = NULL, owner_token = NULL"
                " WHERE session_id = ? AND owner_token = ?",
                (session_id, owner.token),
            )

    def owned_by(self, session_id: str) -> int | None:
        """The pid of the live process whose connection owns the session, else None."""
        row = self._execute(
            "SELECT owner_pid, owner_started, owner_token FROM sessions WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        if row is None or row[2] is None or not owner_alive(row[0], row[1]):
            return None
        return int(row[0])

    def _check_owner(
        self,
        db: sqlite3.Connection,
        session_id: str,
        owner: Owner,
        *,
        allow_free: bool,
        missing_raises: bool = False,
    ) -> bool:
        """Inside a write transaction: False when the session does not exist (or raises
        `SessionNotFound`); raises `SessionInUse` when another live owner holds it."""
        row = db.execute(
            "SELECT owner_pid, owner_started, owner_token FROM sessions WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        if row is None:
            if missing_raises:
                raise SessionNotFound(session_id)
            return False
        pid, started, token = row
        if token == owner.token:
            return True
        if token is not None and owner_alive(pid, started):
            raise SessionInUse(session_id, pid, same_process=pid == owner.pid)
        if token is None and not allow_free:
            raise SessionInUse(session_id, None)
        return True

    def usage(self, session_id: str) -> JsonObject | None:
        """The session's last usage_update as `end_turn` kept it; None before the first. The
        last turn's, when it kept one, is the newest: the sessions row takes it only once the
        response is written (STORE4-003)."""
        row = self._execute(
            "SELECT COALESCE((SELECT usage FROM turns WHERE session_id = ?1 ORDER BY seq DESC"
            " LIMIT 1), usage) FROM sessions WHERE session_id = ?1",
            (session_id,),
        ).fetchone()
        if row is None or row[0] is None:
            return None
        value = json.loads(row[0])
        return value if isinstance(value, dict) else None


def _session_values(record: SessionRecord) -> tuple[Any, ...]:
    return (
        record.session_id,
        record.cwd,
        dumps(list(record.additional_directories)),
        record.mode,
        record.model,
        record.title,
        record.created_at,
        record.updated_at,
        dumps(list(record.mcp_servers)),
    )


def _session(row: Sequence[Any]) -> SessionRecord:
    session_id, cwd, dirs, mode, model, title, created, updated, mcp = row
    return SessionRecord(
        session_id=session_id,
        cwd=cwd,
        additional_directories=tuple(json.loads(dirs)),
        mode=mode,
        model=model,
        title=title,
        created_at=created,
        updated_at=updated,
        mcp_servers=tuple(json.loads(mcp)),
    )


def _make_cursor(updated_at: float, session_id: str) -> str:
    raw = json.dumps([updated_at, session_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _read_cursor(cursor: str) -> tuple[float, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        updated_at, session_id = json.loads(raw)
    except (binascii.Error, ValueError, TypeError) as error:
        raise ValueError(f"not a session/list cursor: {cursor!r}") from error
    if not isinstance(updated_at, int | float) or not isinstance(session_id, str):
        raise ValueError(f"not a session/list cursor: {cursor!r}")
    return float(updated_at), session_id
