"""Turn-level rows of the session store: turns, kept messages and shown tool calls.

Functions over an open connection; the writers run inside the caller's transaction
(`SessionStore` owns transactions and error translation). Sequence numbers are per session
and taken inside the transaction, so concurrent writers never collide.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Sequence
from typing import Any

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.providers import AssistantTurn, Message, UserTurn
from acp_bridge.sessions._codec import (
    content_from_json,
    content_to_json,
    dumps,
    locations_from_json,
    locations_to_json,
    message_from_json,
    message_to_json,
)
from acp_bridge.sessions._compactions import (
    compaction_from_json,
    compaction_to_json,
    is_compaction,
    read_history,
)
from acp_bridge.sessions._records import (
    DisplaySegment,
    StoredModelCall,
    StoredToolCall,
    StoredTurn,
    TurnStart,
    TurnState,
)
from acp_bridge.tools import ToolKind
from acp_bridge.turn import CompactionRecord, ToolStatus, turn_id_for

__all__ = [
    "TOOL_CALL_COLUMNS",
    "end_turn",
    "history",
    "insert_compaction",
    "insert_message",
    "insert_turn",
    "last_ordinal",
    "last_seq",
    "save_tool_call",
    "tool_call_from_row",
    "turn_pages",
    "turns",
]

TOOL_CALL_COLUMNS = (
    "tool_call_id, model_call, position, title, kind, status, content, locations, raw_input,"
    " raw_output, effect_key"
)
"""The columns `tool_call_from_row` reads, in its order."""

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
    ).fetchone()
    if (
        last is not None
        and last[2] == TurnState.COMPLETED.value
        and not last[3]
        and not last[5]
        and _same_prompt(last[4], prompt)
    ):  # SESS-UNANSWERED-001: completed, its response never written: answered from here
        return TurnStart(last[0], last[1], last[7], last[8], unanswered=last[6])
    (top,) = db.execute(
        "SELECT COALESCE(MAX(ordinal), 0) FROM turns WHERE session_id = ?", (session_id,)
    ).fetchone()
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
) -> None:
    db.execute(
        "UPDATE turns SET state = ?, stop_reason = ?, note = ?, ended_at = ?, answered = ?"
        " WHERE session_id = ? AND seq = ?",
        (state.value, stop_reason, note, time.time(), int(answered), session_id, seq),
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


def _loads_or_none(text: str | None) -> JsonValue:
    return None if text is None else json.loads(text)


# -- reading ---------------------------------------------------------------------------------


def history(
    db: sqlite3.Connection, session_id: str, through_seq: int | None = None
) -> list[Message]:
    """The model history (of the turns up to `through_seq`), its last compaction applied
    (COMPACT-005)."""
    return read_history(db, session_id, through_seq)


def turns(db: sqlite3.Connection, session_id: str) -> list[StoredTurn]:
    """Every turn of the session, oldest first."""
    return [turn for page in turn_pages(db, session_id) for turn in page]


def turn_pages(
    db: sqlite3.Connection, session_id: str, page_size: int = 64, *, state: str | None = None
) -> Iterator[list[StoredTurn]]:
    """The session's turns (only those in `state` if given), oldest first, `page_size` at a
    time (a replay holds one page)."""
    after = -1
    while True:
        page = _turn_page(db, session_id, after, page_size, state)
        if not page:
            return
        yield page
        after = page[-1].seq


def last_seq(db: sqlite3.Connection, session_id: str) -> int:
    (seq,) = db.execute(
        "SELECT COALESCE(MAX(seq), 0) FROM turns WHERE session_id = ?", (session_id,)
    ).fetchone()
    return int(seq)


def last_ordinal(db: sqlite3.Connection, session_id: str) -> int:
    (ordinal,) = db.execute(
        "SELECT COALESCE(MAX(ordinal), 0) FROM turns WHERE session_id = ?", (session_id,)
    ).fetchone()
    return int(ordinal)


def _turn_page(
    db: sqlite3.Connection, session_id: str, after: int, limit: int, state: str | None
) -> list[StoredTurn]:
    rows = db.execute(
        "SELECT seq, ordinal, turn_id, id_prefix, state, superseded, prompt, stop_reason, note,"
        " started_at, ended_at FROM turns WHERE session_id = ? AND seq > ?"
        " AND (? IS NULL OR state = ?) ORDER BY seq LIMIT ?",
        (session_id, after, state, state, limit),
    ).fetchall()
    if not rows:
        return []
    span = (session_id, rows[0][0], rows[-1][0])
    messages: dict[int, list[Message]] = {}
    model_calls: dict[int, list[StoredModelCall]] = {}
    compactions: dict[int, list[CompactionRecord]] = {}
    for turn_seq, call, attempt, body, display in db.execute(
        "SELECT turn_seq, model_call, attempt, body, display FROM messages"
        " WHERE session_id = ? AND turn_seq BETWEEN ? AND ? ORDER BY turn_seq, seq",
        span,
    ):
        if is_compaction(body):
            compactions.setdefault(turn_seq, []).append(compaction_from_json(json.loads(body)))
            continue
        message = message_from_json(json.loads(body))
        messages.setdefault(turn_seq, []).append(message)
        if call is not None and isinstance(message, AssistantTurn):
            segments = tuple(DisplaySegment(*item) for item in json.loads(display or "[]"))
            model_calls.setdefault(turn_seq, []).append(
                StoredModelCall(call, attempt, message, segments)
            )
    tool_calls: dict[int, list[StoredToolCall]] = {}
    for row in db.execute(
        f"SELECT turn_seq, {TOOL_CALL_COLUMNS} FROM tool_calls WHERE session_id = ?"
        " AND turn_seq BETWEEN ? AND ? ORDER BY turn_seq, position",
        span,
    ):
        tool_calls.setdefault(row[0], []).append(tool_call_from_row(row[1:]))
    out: list[StoredTurn] = []
    for row in rows:
        seq, ordinal, turn_id, prefix, state, superseded, prompt, stop, note, started, ended = row
        out.append(
            StoredTurn(
                seq=seq,
                ordinal=ordinal,
                turn_id=turn_id,
                id_prefix=prefix,
                state=TurnState(state),
                superseded=bool(superseded),
                prompt=tuple(json.loads(prompt)),
                stop_reason=stop,
                note=note,
                started_at=started,
                ended_at=ended,
                messages=tuple(messages.get(seq, ())),
                model_calls=tuple(model_calls.get(seq, ())),
                tool_calls=tuple(tool_calls.get(seq, ())),
                compactions=tuple(compactions.get(seq, ())),
            )
        )
    return out


def tool_call_from_row(row: Sequence[Any]) -> StoredToolCall:
    """A tool call from its `TOOL_CALL_COLUMNS`."""
    tool_call_id, call, position, title, kind, status, content, locations, raw_in, raw_out, key = (
        row
    )
    return StoredToolCall(
        tool_call_id=tool_call_id,
        model_call=call,
        position=position,
        title=title,
        kind=ToolKind(kind),
        status=ToolStatus(status),
        content=content_from_json(json.loads(content)),
        locations=locations_from_json(json.loads(locations)),
        raw_input=_loads_or_none(raw_in),
        raw_output=_loads_or_none(raw_out),
        effect_key=key,
    )
