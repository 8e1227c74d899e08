"""What the stored turns showed, read for `session/load` (issue 15.3), a page at a time.

A replay needs each turn's prompt, what its kept model calls showed (their display
segments), its tool calls in their final state, its compactions and its closing note: never
the conversation itself. So the messages' bodies are not read here (a compaction row's body
excepted, and only for the rows that are one): the kept messages, tool results and images
that make a session large stay in SQLite. Three indexed range queries per page.

Pages grow: the first is `FIRST_PAGE` turns, so the first update of any session leaves after
a few turns are read, the others `PAGE` turns. Memory holds one page.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass

from acp_bridge._json import JsonObject
from acp_bridge.sessions._compactions import (
    COMPACTION_BODY_PREFIX,
    compaction_from_json,
)
from acp_bridge.sessions._records import DisplaySegment, StoredToolCall
from acp_bridge.sessions._turn_rows import TOOL_CALL_COLUMNS, tool_call_from_row
from acp_bridge.turn import CompactionRecord

__all__ = ["FIRST_PAGE", "PAGE", "ShownCall", "ShownTurn", "shown_pages"]

FIRST_PAGE = 8
"""Turns in a replay's first page: what is read before the first update is written."""
PAGE = 64
"""Turns in each later page."""


@dataclass(frozen=True, slots=True)
class ShownCall:
    """A kept model call as the editor saw it: the display segments of its kept attempt."""

    model_call: int
    display: tuple[DisplaySegment, ...]


@dataclass(frozen=True, slots=True)
class ShownTurn:
    """One stored turn as a replay shows it (`transcript` takes these)."""

    seq: int
    id_prefix: str
    prompt: tuple[JsonObject, ...]
    note: str | None
    model_calls: tuple[ShownCall, ...] = ()
    tool_calls: tuple[StoredToolCall, ...] = ()
    compactions: tuple[CompactionRecord, ...] = ()


# A kept model call's row has its display; a compaction row is told by its body's start
# (only those bodies are read). Other rows are not part of a replay.
_SHOWN_MESSAGES = (
    "SELECT turn_seq, model_call, display, CASE WHEN model_call IS NULL THEN body END"
    " FROM messages WHERE session_id = ? AND turn_seq BETWEEN ? AND ?"
    " AND (model_call IS NOT NULL"
    f" OR substr(body, 1, {len(COMPACTION_BODY_PREFIX)}) = '{COMPACTION_BODY_PREFIX}')"
    " ORDER BY turn_seq, seq"
)
_TOOL_CALLS = (
    f"SELECT turn_seq, {TOOL_CALL_COLUMNS} FROM tool_calls WHERE session_id = ?"
    " AND turn_seq BETWEEN ? AND ? ORDER BY turn_seq, position"
)


def shown_pages(
    db: sqlite3.Connection, session_id: str, first: int = FIRST_PAGE, size: int = PAGE
) -> Iterator[list[ShownTurn]]:
    """Every turn of the session as shown, oldest first: `first` turns, then `size` at a
    time."""
    after, limit = -1, first
    while True:
        page = _page(db, session_id, after, limit)
        if not page:
            return
        yield page
        after, limit = page[-1].seq, size


def _page(db: sqlite3.Connection, session_id: str, after: int, limit: int) -> list[ShownTurn]:
    turns = db.execute(
        "SELECT seq, id_prefix, prompt, note FROM turns WHERE session_id = ? AND seq > ?"
        " ORDER BY seq LIMIT ?",
        (session_id, after, limit),
    ).fetchall()
    if not turns:
        return []
    span = (session_id, turns[0][0], turns[-1][0])
    calls: dict[int, list[ShownCall]] = {}
    compactions: dict[int, list[CompactionRecord]] = {}
    loads = json.loads
    for turn_seq, model_call, display, body in db.execute(_SHOWN_MESSAGES, span):
        if model_call is None:
            compactions.setdefault(turn_seq, []).append(compaction_from_json(loads(body)))
        else:
            segments = tuple(DisplaySegment(*item) for item in loads(display or "[]"))
            calls.setdefault(turn_seq, []).append(ShownCall(model_call, segments))
    tool_calls: dict[int, list[StoredToolCall]] = {}
    for row in db.execute(_TOOL_CALLS, span):
        tool_calls.setdefault(row[0], []).append(tool_call_from_row(row[1:]))
    return [
        ShownTurn(
            seq,
            prefix,
            tuple(loads(prompt)),
            note,
            tuple(calls.get(seq, ())),
            tuple(tool_calls.get(seq, ())),
            tuple(compactions.get(seq, ())),
        )
        for seq, prefix, prompt, note in turns
    ]
