"""Turn-level writes of the session store: a turn's start and end, kept messages and
compactions, and tool calls as shown.

Functions over an open connection, run inside the caller's transaction (`SessionStore` owns
transactions and error translation). Sequence numbers are per session and taken inside the
transaction, so concurrent writers never collide. The rows are read back by `_turn_rows`.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.providers import Message, UserTurn
from acp_bridge.sessions._codec import (
    content_to_json,
    dumps,
    locations_to_json,
    message_to_json,
)
from acp_bridge.sessions._compactions import compaction_to_json
from acp_bridge.sessions._records import StoredModelCall, StoredToolCall, TurnStart, TurnState
from acp_bridge.turn import CompactionRecord, turn_id_for

__all__ = ["end_turn", "insert_compaction", "insert_message", "insert_turn", "save_tool_call"]

# A turn in one of these states may be run again by sending the same prompt (SESS-021).
_RESUMABLE = frozenset({TurnState.RUNNING, TurnState.INTERRUPTED, TurnState.FAILED})


def _same_prompt(stored: str, prompt: Sequence[JsonObject]) -> bool:
    canonical = json.dumps(list(prompt), sort_keys=True)
    return json.dumps(json.loads(stored), sort_keys=True) == canonical


def insert_turn(
    db: sqlite3.Connection,
    session_id: str,
    prompt: Sequence[JsonObject],
    message: UserTurn | None,
) -> TurnStart:
    last = db.execute(
        "SELECT seq, ordinal, state, superseded, prompt, answered, stop_reason, turn_id,"
        " id_prefix FROM turns WHERE session_id = ? ORDER BY seq DESC LIMIT 1",
        (session_id,),
    ).fetchone()  # the last row's ordinal is the session's highest (STORE4-004)
    if (
        last is not None
        and last[2] == TurnState.COMPLETED.value
        and not last[3]
        and not last[5]
        and _same_prompt(last[4], prompt)
    ):  # SESS-UNANSWERED-001: completed, its response never written: answered from here
        return TurnStart(last[0], last[1], last[7], last[8], unanswered=last[6])
    # A new turn's ordinal is the highest plus one and a re-run keeps the last row's, so the
    # last row's ordinal is the highest: no scan of the session's turns (STORE4-004).
    top = 0 if last is None else int(last[1])
    seq = 1 if last is None else last[0] + 1
    retry_of: int | None = None
    if (
        last is not None
        and TurnState(last[2]) in _RESUMABLE
        and not last[3]
        and _same_prompt(last[4], prompt)
    ):
        retry_of, ordinal = last[0], last[1]
        (runs,) = db.execute(
            "SELECT COUNT(*) FROM turns WHERE session_id = ? AND ordinal = ?",
            (session_id, ordinal),
        ).fetchone()
        turn_id = turn_id_for(session_id, ordinal)
        id_prefix = f"{turn_id}-r{runs}"  # fresh editor-side ids, same effect keys
        db.execute(
            "UPDATE turns SET superseded = 1, state = CASE WHEN state = 'running'"
            " THEN 'interrupted' ELSE state END, ended_at = COALESCE(ended_at, ?)"
            " WHERE session_id = ? AND ordinal = ?",
            (time.time(), session_id, ordinal),
        )
    else:
        ordinal = top + 1
        turn_id = id_prefix = turn_id_for(session_id, ordinal)
    db.execute(
        "INSERT INTO turns (session_id, seq, ordinal, turn_id, id_prefix, state, prompt,"
        " started_at) VALUES (?, ?, ?, ?, ?, 'running', ?, ?)",
        (session_id, seq, ordinal, turn_id, id_prefix, dumps(list(prompt)), time.time()),
    )
    if message is not None:  # None: a command turn (/compact) adds nothing to history
        insert_message(db, session_id, seq, message, None)
    return TurnStart(seq, ordinal, turn_id, id_prefix, retry_of)


def end_turn(
    db: sqlite3.Connection,
    session_id: str,
    seq: int,
    state: TurnState,
    *,
    stop_reason: str | None = None,
    note: str | None = None,
    answered: bool = True,
    usage: str | None = None,
) -> None:
    """`usage`: the session's last usage_update (JSON text) when the turn changed it."""
    db.execute(
        "UPDATE turns SET state = ?, stop_reason = ?, note = ?, ended_at = ?, answered = ?,"
        " usage = ? WHERE session_id = ? AND seq = ?",
        (state.value, stop_reason, note, time.time(), int(answered), usage, session_id, seq),
    )


def insert_message(
    db: sqlite3.Connection,
    session_id: str,
    turn_seq: int,
    message: Message,
    model_call: StoredModelCall | None,
) -> None:
    display = (
        None
        if model_call is None
        else dumps([[s.kind, s.message_id, s.text] for s in model_call.display])
    )
    db.execute(
        "INSERT INTO messages (session_id, seq, turn_seq, model_call, attempt, body, display)"
        " SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ?, ?, ? FROM messages WHERE session_id = ?",
        (
            session_id,
            turn_seq,
            None if model_call is None else model_call.model_call,
            None if model_call is None else model_call.attempt,
            dumps(message_to_json(message)),
            display,
            session_id,
        ),
    )


def insert_compaction(
    db: sqlite3.Connection, session_id: str, turn_seq: int, record: CompactionRecord
) -> None:
    db.execute(
        "INSERT INTO messages (session_id, seq, turn_seq, body)"
        " SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ? FROM messages WHERE session_id = ?",
        (session_id, turn_seq, dumps(compaction_to_json(record)), session_id),
    )


def save_tool_call(
    db: sqlite3.Connection, session_id: str, turn_seq: int, call: StoredToolCall
) -> None:
    db.execute(
        "INSERT OR REPLACE INTO tool_calls (session_id, tool_call_id, turn_seq, model_call,"
        " position, title, kind, status, content, locations, raw_input, raw_output, effect_key,"
        " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            session_id,
            call.tool_call_id,
            turn_seq,
            call.model_call,
            call.position,
            call.title,
            call.kind.value,
            call.status.value,
            dumps(content_to_json(call.content)),
            dumps(locations_to_json(call.locations)),
            _json_or_null(call.raw_input),
            _json_or_null(call.raw_output),
            call.effect_key,
            time.time(),
        ),
    )


def _json_or_null(value: JsonValue) -> str | None:
    return None if value is None else dumps(value)
