"""What the journal knows of effect keys, for the cross-check with the effect ledger.

The journal records a call's effect key before the ledger does and before the effect can
begin (SESS-011), so the keys it holds are every effect that may have happened
(EFFECT-LOST-001). These queries read them: the keys of earlier runs of one turn (what a turn
sent again checks its calls against), and whether a session's journal has effects older than
the ledger file itself (a ledger lost and started anew: EFFECT-LOST-002).
"""

from __future__ import annotations

import sqlite3

__all__ = ["earlier_effect_keys", "effects_before"]


def earlier_effect_keys(
    db: sqlite3.Connection, session_id: str, ordinal: int, before_seq: int
) -> frozenset[str]:
    """The effect keys the journal recorded in the runs of turn `ordinal` before `before_seq`."""
    rows = db.execute(
        "SELECT c.effect_key FROM turns t JOIN tool_calls c"
        " ON c.session_id = t.session_id AND c.turn_seq = t.seq"
        " WHERE t.session_id = ? AND t.ordinal = ? AND t.seq < ? AND c.effect_key IS NOT NULL",
        (session_id, ordinal, before_seq),
    ).fetchall()
    return frozenset(key for (key,) in rows)


def effects_before(db: sqlite3.Connection, session_id: str, moment: float) -> int:
    """How many effect keys the session's journal recorded in turns begun before `moment`."""
    (count,) = db.execute(
        "SELECT COUNT(*) FROM turns t JOIN tool_calls c"
        " ON c.session_id = t.session_id AND c.turn_seq = t.seq"
        " WHERE t.session_id = ? AND t.started_at < ? AND c.effect_key IS NOT NULL",
        (session_id, moment),
    ).fetchone()
    return int(count)
