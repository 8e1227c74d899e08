"""Turn-level rows of the session store read back: the model history, the turns a page at a
time with what they kept and showed, and the last turn's numbers.

Functions over an open connection (`SessionStore` translates their errors); the rows are
written by `_turn_writes`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

from acp_bridge._json import JsonValue
from acp_bridge.providers import AssistantTurn, Message
from acp_bridge.sessions._codec import content_from_json, locations_from_json, message_from_json
from acp_bridge.sessions._compactions import compaction_from_json, is_compaction, read_history
from acp_bridge.sessions._records import (
    DisplaySegment,
    StoredModelCall,
    StoredToolCall,
    StoredTurn,
    TurnState,
)
from acp_bridge.tools import ToolKind
from acp_bridge.turn import CompactionRecord, ToolStatus

__all__ = [
    "TOOL_CALL_COLUMNS",
    "history",
    "last_ordinal",
    "last_seq",
    "tool_call_from_row",
    "turn_pages",
    "turns",
]

TOOL_CALL_COLUMNS = (
    "tool_call_id, model_call, position, title, kind, status, content, locations, raw_input,"
    " raw_output, effect_key"
)
"""The columns `tool_call_from_row` reads, in its order."""


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
