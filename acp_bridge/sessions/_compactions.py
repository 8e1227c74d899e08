"""Compaction records in the session store: kept among the messages, read back into history.

A compaction (`acp_bridge.turn.CompactionRecord`) is journaled as one row of `messages`, in
order with the conversation, its body `{"type": "compaction", "compactionId", "summary",
"kept", "trigger", "beforeModelCall", "summarised"}` (COMPACT-005). Reading the history
applies the last one of the turns not superseded: the summary, then the `kept` messages
before it, then every message after it, through the same `compacted_history` the turn
engine applied live, so a reloaded or restarted session sends the provider the conversation
it would have sent. Only the rows after the last compaction and its `kept` rows before it
are read.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from acp_bridge._json import JsonObject
from acp_bridge.providers import Message
from acp_bridge.sessions._codec import message_from_json
from acp_bridge.turn import CompactionRecord, compacted_history

__all__ = [
    "COMPACTION_BODY_PREFIX",
    "compaction_from_json",
    "compaction_to_json",
    "is_compaction",
    "read_history",
]

COMPACTION_BODY_PREFIX = '{"type":"compaction"'
"""How a compaction row's body starts (`dumps` writes `type` first, compact)."""

_LIVE = (
    "FROM messages AS m JOIN turns AS t ON t.session_id = m.session_id AND t.seq = m.turn_seq"
    " WHERE m.session_id = ? AND t.superseded = 0 AND (? IS NULL OR m.turn_seq <= ?)"
)
_IS_COMPACTION = f"substr(m.body, 1, {len(COMPACTION_BODY_PREFIX)}) = '{COMPACTION_BODY_PREFIX}'"


def compaction_to_json(record: CompactionRecord) -> JsonObject:
    return {
        "type": "compaction",
        "compactionId": record.compaction_id,
        "summary": record.summary,
        "kept": record.kept,
        "trigger": record.trigger,
        "beforeModelCall": record.before_model_call,
        "summarised": record.summarised,
    }


def compaction_from_json(data: Any) -> CompactionRecord:
    return CompactionRecord(
        compaction_id=str(data["compactionId"]),
        summary=str(data["summary"]),
        kept=int(data["kept"]),
        trigger=str(data.get("trigger", "")),
        before_model_call=int(data.get("beforeModelCall", 0)),
        summarised=int(data.get("summarised", 0)),  # absent in rows of an older bridge
    )


def is_compaction(body: str) -> bool:
    return body.startswith(COMPACTION_BODY_PREFIX)


def read_history(
    db: sqlite3.Connection, session_id: str, through_seq: int | None = None
) -> list[Message]:
    """The model history of the session (of its turns up to `through_seq`), its last
    compaction applied."""
    live = (session_id, through_seq, through_seq)
    last = db.execute(
        f"SELECT m.seq, m.body {_LIVE} AND {_IS_COMPACTION} ORDER BY m.seq DESC LIMIT 1", live
    ).fetchone()
    if last is None:
        rows = db.execute(f"SELECT m.body {_LIVE} ORDER BY m.seq", live).fetchall()
        return [message_from_json(json.loads(body)) for (body,) in rows]
    seq, body = last
    record = compaction_from_json(json.loads(body))
    before = db.execute(
        f"SELECT m.body {_LIVE} AND m.seq < ? AND NOT {_IS_COMPACTION} ORDER BY m.seq DESC LIMIT ?",
        (*live, seq, record.kept),
    ).fetchall()
    after = db.execute(
        f"SELECT m.body {_LIVE} AND m.seq > ? ORDER BY m.seq", (*live, seq)
    ).fetchall()
    kept = [message_from_json(json.loads(b)) for (b,) in reversed(before)]
    return [
        *compacted_history(record.summary, kept),
        *(message_from_json(json.loads(b)) for (b,) in after),
    ]
