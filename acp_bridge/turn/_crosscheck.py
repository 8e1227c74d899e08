"""The effect ledger cross-checked against the session journal (EFFECT-LOST-001).

The journal records a call's effect key, durably, before the ledger records it `started` and
before the effect can begin (SESS-011, `TurnJournal.tool_call_starting`), so the keys the
journal recorded are a superset of the effects that may have happened. A key the journal
recorded that the ledger has no record of was lost with the ledger (a deleted WAL, a
truncated or replaced file): whether it ran is unknown, never "new". `checked_lookup` gives
such a key a `LOST` record, which the engine handles as `started` (EFFECT-009: it asks).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from acp_bridge.turn._effects import EffectKey
from acp_bridge.turn._ledger import EffectLedger, EffectRecord, EffectState

__all__ = ["JournalKnows", "checked_lookup", "lost_record"]

logger = logging.getLogger(__name__)

JournalKnows = Callable[[str], bool]
"""Whether the session journal recorded this effect key as about to run (in an earlier run of
the same turn)."""


def lost_record(key: EffectKey, session_id: str) -> EffectRecord:
    """The record of a key the journal knows and the ledger forgot: outcome unknown."""
    return EffectRecord(
        key=str(key),
        session_id=session_id,
        turn_id=key.turn_id,
        tool=key.tool,
        arguments=key.arguments,
        step=key.step,
        mode="",
        state=EffectState.LOST,
        started_at=0.0,
        done_at=None,
        outcome=None,
    )


def checked_lookup(
    ledger: EffectLedger, key: EffectKey, session_id: str, journal_knows: JournalKnows | None
) -> EffectRecord | None:
    """The ledger's record of `key`; when it has none and the journal recorded the key, a
    `LOST` record (raises `LedgerUnavailable` like `EffectLedger.lookup`)."""
    record = ledger.lookup(key)
    if record is None and journal_knows is not None and journal_knows(str(key)):
        logger.warning(
            "effect %s of turn %s: the session journal recorded it as about to run, but the "
            "effect ledger %s has no record of it (lost?); its outcome counts as unknown",
            key,
            key.turn_id,
            EffectLedger.FILENAME,
        )
        return lost_record(key, session_id)
    return record
