"""The durable session store: SQLite file `sessions.sqlite3` in the state directory.

Beside the effect ledger (`effects.sqlite3`), shared by every bridge process on the directory
(WAL, busy timeout: SESS-001). It keeps each session's settings and owner, its turns
(`running` before the model is called), the kept conversation and the tool calls as shown
(spec/sessions.md). Writes that belong together are one transaction.

Calls are synchronous, like the ledger's: each is a few indexed statements. Every write is
committed when its call returns (it survives the process being killed); only those something
depends on are also fsynced then (SESS-001): a new session, a turn's start with its prompt,
and a tool call's effect key. The others (kept messages, what tool calls showed, a turn's end)
reach the disk with the next of those, or when the store is closed: the end of a turn costs
no fsync (issue 15.2). Row reading and the turn-level writes live in `_turn_rows`.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from acp_bridge._json import JsonObject
from acp_bridge.providers import Message, UserTurn
from acp_bridge.sessions import _turn_rows as rows
from acp_bridge.sessions._codec import dumps
from acp_bridge.sessions._effect_rows import earlier_effect_keys, effects_before
from acp_bridge.sessions._owner import Owner, owner_alive
from acp_bridge.sessions._records import (
    SessionInUse,
    SessionNotFound,
    SessionPage,
    SessionRecord,
    SessionStoreError,
    StoredModelCall,
    StoredToolCall,
    StoredTurn,
    TurnStart,
    TurnState,
)
from acp_bridge.sessions._schema import FILENAME as SCHEMA_FILENAME
from acp_bridge.sessions._schema import connect, transaction
from acp_bridge.turn import CompactionRecord, StoreFileProblem, file_problem

__all__ = ["PAGE_SIZE", "SessionStore"]

PAGE_SIZE = 50
_SESSION_COLUMNS = (
    "session_id, cwd, additional_directories, mode, model, title, created_at, updated_at,"
    " mcp_servers"
)


class SessionStore:
    """Sessions, their turns and what they showed, shared by every process on a state dir."""

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

    @classmethod
    def in_memory(cls) -> SessionStore:
        return cls(None)

    def close(self) -> None:
        """Closes the database, with every commit on disk (SESS-001)."""
        try:
            self._sync_wal()
        finally:
            self._db.close()

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

    def __enter__(self) -> SessionStore:
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
        return _writing(self._db, durable)

    # -- sessions ------------------------------------------------------------------------

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

    # -- turns ---------------------------------------------------------------------------

    def begin_turn(
        self,
        session_id: str,
        owner: Owner,
        prompt: Sequence[JsonObject],
        message: UserTurn | None,
    ) -> TurnStart:
        """Writes the turn (`running`) and its prompt, durably, before the model is called.
        `message` None: a command turn (`/compact`), whose prompt enters no history.

        When the session's last turn did not complete (interrupted or failed) and `prompt`
        equals its prompt, the new turn runs it again: same ordinal and turn id, a fresh id
        prefix, and the old one superseded (SESS-021).
        """
        with self._write(durable=True) as db:
            self._check_owner(db, session_id, owner, allow_free=False, missing_raises=True)
            start = rows.insert_turn(db, session_id, prompt, message)
            db.execute(
                "UPDATE sessions SET updated_at = ?, heartbeat_at = ? WHERE session_id = ?",
                (time.time(), time.time(), session_id),
            )
        return start

    def end_turn(
        self,
        session_id: str,
        seq: int,
        state: TurnState,
        *,
        stop_reason: str | None = None,
        note: str | None = None,
        answered: bool = True,
        usage: JsonObject | None = None,
    ) -> None:
        """`answered=False`: a response is still to be written (`mark_answered` once it is);
        until then the same prompt sent again is answered from here (SESS-UNANSWERED-001).
        `usage` (the session's last usage_update, USAGE-006) is kept in the same
        transaction when given."""
        with self._write() as db:
            rows.end_turn(
                db, session_id, seq, state, stop_reason=stop_reason, note=note, answered=answered
            )
            if usage is None:
                db.execute(
                    "UPDATE sessions SET updated_at = ? WHERE session_id = ?",
                    (time.time(), session_id),
                )
            else:
                db.execute(
                    "UPDATE sessions SET updated_at = ?, usage = ? WHERE session_id = ?",
                    (time.time(), dumps(usage), session_id),
                )

    def mark_answered(self, session_id: str, seq: int) -> None:
        """The turn's response is on the wire (SESS-UNANSWERED-001)."""
        with self._write() as db:
            db.execute(
                "UPDATE turns SET answered = 1 WHERE session_id = ? AND seq = ?", (session_id, seq)
            )

    def add_message(
        self,
        session_id: str,
        turn_seq: int,
        message: Message,
        *,
        model_call: StoredModelCall | None = None,
    ) -> None:
        """Appends a message to the session's history (with what it showed, for a kept
        model call)."""
        with self._write() as db:
            rows.insert_message(db, session_id, turn_seq, message, model_call)

    def add_compaction(self, session_id: str, turn_seq: int, record: CompactionRecord) -> None:
        """Journals a compaction among the messages (COMPACT-005): the history read back
        from here on is the compacted one."""
        with self._write() as db:
            rows.insert_compaction(db, session_id, turn_seq, record)

    def save_tool_call(
        self, session_id: str, turn_seq: int, call: StoredToolCall, *, durable: bool = False
    ) -> None:
        """Writes the tool call's current state (insert or replace); `durable`: on disk when
        it returns (its effect key, before the ledger records it started: SESS-011)."""
        with self._write(durable=durable) as db:
            rows.save_tool_call(db, session_id, turn_seq, call)

    def usage(self, session_id: str) -> JsonObject | None:
        """The session's last usage_update as `end_turn` kept it; None before the first."""
        row = self._execute(
            "SELECT usage FROM sessions WHERE session_id = ?", (session_id,)
        ).fetchone()
        if row is None or row[0] is None:
            return None
        value = json.loads(row[0])
        return value if isinstance(value, dict) else None

    def settle_interrupted(
        self,
        session_id: str,
        seq: int,
        tool_calls: Sequence[StoredToolCall],
        results: Message | None,
        note: str,
    ) -> None:
        """Recovery of one turn, in one transaction: its open tool calls settled, the
        results of its last round (when none were kept), the turn `interrupted`."""
        with self._write() as db:
            for call in tool_calls:
                rows.save_tool_call(db, session_id, seq, call)
            if results is not None:
                rows.insert_message(db, session_id, seq, results, None)
            rows.end_turn(db, session_id, seq, TurnState.INTERRUPTED, note=note)

    # -- reading -------------------------------------------------------------------------

    def history(self, session_id: str, *, through_seq: int | None = None) -> list[Message]:
        """The model history: kept messages of every turn not superseded, in order (only of
        the turns up to `through_seq`, when given)."""
        try:
            return rows.history(self._db, session_id, through_seq)
        except sqlite3.Error as error:
            raise SessionStoreError(f"session store: {error}") from error

    def turns(self, session_id: str) -> list[StoredTurn]:
        """Every turn of the session, oldest first, with what it kept and showed."""
        try:
            return rows.turns(self._db, session_id)
        except sqlite3.Error as error:
            raise SessionStoreError(f"session store: {error}") from error

    def turn_pages(self, session_id: str, page_size: int = 64) -> Iterator[list[StoredTurn]]:
        """`turns`, a page at a time: a replay holds one page, never the whole session."""
        pages = rows.turn_pages(self._db, session_id, page_size)
        while True:
            try:
                page = next(pages, None)
            except sqlite3.Error as error:
                raise SessionStoreError(f"session store: {error}") from error
            if page is None:
                return
            yield page

    def running_turns(self, session_id: str) -> list[StoredTurn]:
        """The session's turns still marked `running` (what recovery settles), oldest first."""
        try:
            pages = rows.turn_pages(self._db, session_id, state=TurnState.RUNNING.value)
            return [turn for page in pages for turn in page]
        except sqlite3.Error as error:
            raise SessionStoreError(f"session store: {error}") from error

    def earlier_effect_keys(self, session_id: str, start: TurnStart) -> frozenset[str]:
        """The effect keys journaled by the earlier runs of this turn (EFFECT-LOST-001)."""
        try:
            return earlier_effect_keys(self._db, session_id, start.ordinal, start.seq)
        except sqlite3.Error as error:
            raise SessionStoreError(f"session store: {error}") from error

    def effects_before(self, session_id: str, moment: float) -> int:
        """Effect keys journaled in the session's turns begun before `moment` (EFFECT-LOST-002)."""
        try:
            return effects_before(self._db, session_id, moment)
        except sqlite3.Error as error:
            raise SessionStoreError(f"session store: {error}") from error

    def last_seq(self, session_id: str) -> int:
        """The row number of the session's last turn (0 when it has none)."""
        try:
            return rows.last_seq(self._db, session_id)
        except sqlite3.Error as error:
            raise SessionStoreError(f"session store: {error}") from error

    def last_ordinal(self, session_id: str) -> int:
        """The ordinal of the session's last turn (0 when it has none)."""
        try:
            return rows.last_ordinal(self._db, session_id)
        except sqlite3.Error as error:
            raise SessionStoreError(f"session store: {error}") from error


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
