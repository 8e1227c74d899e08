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
no fsync (issue 15.2). The turn-level writes live in `_turn_writes`, their reading in
`_turn_rows`, the session rows in `_session_table`, the file and its transactions in
`_store_file`.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from typing import TypeVar

from acp_bridge._json import JsonObject
from acp_bridge.providers import Message, UserTurn
from acp_bridge.sessions import _turn_rows as rows
from acp_bridge.sessions import _turn_writes as writes
from acp_bridge.sessions._codec import dumps
from acp_bridge.sessions._effect_rows import earlier_effect_keys, effects_before
from acp_bridge.sessions._owner import Owner
from acp_bridge.sessions._records import (
    SessionStoreError,
    StoredModelCall,
    StoredToolCall,
    StoredTurn,
    TurnStart,
    TurnState,
)
from acp_bridge.sessions._session_table import PAGE_SIZE, SessionTable
from acp_bridge.sessions._shown import FIRST_PAGE, PAGE, ShownTurn, shown_pages
from acp_bridge.turn import CompactionRecord

__all__ = ["PAGE_SIZE", "SessionStore"]


class SessionStore(SessionTable):
    """Sessions, their turns and what they showed, shared by every process on a state dir."""

    @classmethod
    def in_memory(cls) -> SessionStore:
        return cls(None)

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
            start = writes.insert_turn(db, session_id, prompt, message)
            # A new turn after one whose response was never written: that turn's usage is
            # the session's now (STORE4-003; `mark_answered` never ran for it).
            folded = start.seq - 1 if start.unanswered is None else 0
            db.execute(
                "UPDATE sessions SET updated_at = ?, heartbeat_at = ?, usage = COALESCE("
                "(SELECT usage FROM turns WHERE session_id = ? AND seq = ? AND answered = 0),"
                " usage) WHERE session_id = ?",
                (time.time(), time.time(), session_id, folded, session_id),
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
        answer: StoredModelCall | None = None,
    ) -> None:
        """`answered=False`: a response is still to be written (`mark_answered` once it is);
        until then the same prompt sent again is answered from here (SESS-UNANSWERED-001).
        `usage` (the session's last usage_update, USAGE-006) is kept in the turn's row, in
        the same transaction, when given; so is `answer`, the turn's last kept answer,
        appended to its history first (`TurnRecorder.take_answer`, STORE4-001). The sessions
        row (its `updated_at` in two indexes, the usage) is written by `mark_answered`, after
        the response; only an end that is answered already writes it here (STORE4-003)."""
        kept = None if usage is None else dumps(usage)
        with self._write() as db:
            if answer is not None:
                writes.insert_message(db, session_id, seq, answer.message, answer)
            writes.end_turn(
                db,
                session_id,
                seq,
                state,
                stop_reason=stop_reason,
                note=note,
                answered=answered,
                usage=kept,
            )
            if answered:
                db.execute(
                    "UPDATE sessions SET updated_at = ?, usage = COALESCE(?, usage)"
                    " WHERE session_id = ?",
                    (time.time(), kept, session_id),
                )

    def mark_answered(self, session_id: str, seq: int) -> None:
        """The turn's response is on the wire (SESS-UNANSWERED-001); nothing waits for the
        store now, so the sessions row takes the turn's end (`updated_at`) and its usage
        (STORE4-003), and the write-ahead log is checkpointed here when due."""
        with self._write() as db:
            db.execute(
                "UPDATE turns SET answered = 1 WHERE session_id = ? AND seq = ?", (session_id, seq)
            )
            db.execute(
                "UPDATE sessions SET updated_at = ?, usage = COALESCE((SELECT usage FROM turns"
                " WHERE session_id = ? AND seq = ?), usage) WHERE session_id = ?",
                (time.time(), session_id, seq, session_id),
            )
        self.checkpoint_if_due()

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
            writes.insert_message(db, session_id, turn_seq, message, model_call)

    def add_compaction(self, session_id: str, turn_seq: int, record: CompactionRecord) -> None:
        """Journals a compaction among the messages (COMPACT-005): the history read back
        from here on is the compacted one."""
        with self._write() as db:
            writes.insert_compaction(db, session_id, turn_seq, record)

    def save_tool_call(
        self, session_id: str, turn_seq: int, call: StoredToolCall, *, durable: bool = False
    ) -> None:
        """Writes the tool call's current state (insert or replace); `durable`: on disk when
        it returns (its effect key, before the ledger records it started: SESS-011)."""
        with self._write(durable=durable) as db:
            writes.save_tool_call(db, session_id, turn_seq, call)

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
                writes.save_tool_call(db, session_id, seq, call)
            if results is not None:
                writes.insert_message(db, session_id, seq, results, None)
            writes.end_turn(db, session_id, seq, TurnState.INTERRUPTED, note=note)

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
        """`turns`, a page at a time: the caller holds one page, never the whole session."""
        return _translated(rows.turn_pages(self._db, session_id, page_size))

    def shown_pages(
        self, session_id: str, first: int = FIRST_PAGE, size: int = PAGE
    ) -> Iterator[list[ShownTurn]]:
        """What every turn showed, oldest first, for `session/load`: `first` turns, then
        `size` at a time, without reading the conversation (`_shown`)."""
        return _translated(shown_pages(self._db, session_id, first, size))

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


_Page = TypeVar("_Page")


def _translated(pages: Iterator[_Page]) -> Iterator[_Page]:
    """`pages`, their SQLite errors raised as `SessionStoreError`."""
    while True:
        try:
            page = next(pages, None)
        except sqlite3.Error as error:
            raise SessionStoreError(f"session store: {error}") from error
        if page is None:
            return
        yield page
