"""How a prompt turn's end is recorded in the session store, whatever ended it (AGENT-CANCEL-003).

Every way a turn ends records its end, so a later prompt is never taken for a re-run of a turn
that in fact ended (SESS-021):

- its response (`session/cancel` included): `completed`, with the stop reason;
- an error response: `failed`, with a note (what a replay shows);
- `$/cancel_request` of the prompt: `completed`, stop reason `cancelled` (the editor gave up);
- the connection closing mid-turn: `interrupted`, with a note; sending the same prompt again
  continues it (SESS-021).
"""

from __future__ import annotations

import logging
import time

from acp_bridge._json import JsonObject
from acp_bridge.agent._crash_point import crash_point
from acp_bridge.agent._session import Session
from acp_bridge.providers import repair_surrogates
from acp_bridge.sessions import SessionStore, StoredModelCall, TurnStart, TurnState
from acp_bridge.turn import StopReason, TurnResult

__all__ = [
    "CANCELLED_NOTE",
    "CONNECTION_CLOSED_NOTE",
    "cancelled_note",
    "changed_usage",
    "failed_note",
    "outside_end",
    "record_end",
]

_log = logging.getLogger("acp_bridge.agent")

CONNECTION_CLOSED_NOTE = (
    "This turn was interrupted: the editor's connection closed before it finished. What "
    "completed is shown above. Send the same prompt again to continue it; effects that "
    "already ran are not run again."
)


CANCELLED_NOTE = "Cancelled before any reply."


def cancelled_note(result: TurnResult) -> str | None:
    """The closing text a replay shows for a turn cancelled before it showed anything: the
    editor grouping consecutive user messages then still replays the next prompt as a
    message of its own (SESS-CANCEL-001)."""
    if result.stop_reason is not StopReason.CANCELLED or result.tool_runs:
        return None
    return None if any(a.shown_chunks for a in result.attempts) else CANCELLED_NOTE


def failed_note(reason: str) -> str:
    """The closing text a replay shows for a turn that ended with an error."""
    # A provider's message may quote broken text; the journal stores UTF-8 (TURN-TEXT-001).
    return f"This turn ended with an error: {repair_surrogates(reason)}"


def outside_end(connection_closed: bool) -> tuple[TurnState, str | None, str | None]:
    """(state, stop reason, note) of a turn cancelled from outside its own scope."""
    if connection_closed:
        return TurnState.INTERRUPTED, None, CONNECTION_CLOSED_NOTE
    return TurnState.COMPLETED, "cancelled", None  # $/cancel_request: the editor gave up


def record_end(
    store: SessionStore | None,
    session: Session,
    start: TurnStart,
    state: TurnState,
    stop_reason: str | None = None,
    note: str | None = None,
    *,
    answered: bool = True,
    usage: JsonObject | None = None,
    answer: StoredModelCall | None = None,
) -> None:
    """Records the end; a failure is logged, never masking the turn's own outcome (a later
    load settles a turn left `running`). `store` None: the connection already released its
    sessions, so the turn stays `running` for the next owner to settle (SESS-020).
    `answered=False`: the response is still to be written (SESS-UNANSWERED-001). `usage`:
    the session's last usage_update, kept in the same transaction (USAGE-006); `answer`:
    the turn's last kept answer, held until now (STORE4-001), in it too."""
    session.updated_at = time.time()
    if store is None:
        _log.warning("turn %s ended after its connection closed the store", start.turn_id)
        return
    crash_point("turn-ending")  # tests only: kill -9 with the answer held, the end not written
    try:
        store.end_turn(
            session.session_id,
            start.seq,
            state,
            stop_reason=stop_reason,
            note=note,
            answered=answered,
            usage=usage,
            answer=answer,
        )
        if usage is not None and session.live is not None:
            session.live.kept = usage
    except Exception:
        _log.exception("could not record the end of turn %s", start.turn_id)
        return
    crash_point("turn-committed")  # tests only: kill -9 in the commit -> response window


def changed_usage(session: Session) -> JsonObject | None:
    """USAGE-006: the session's last usage_update, when the store does not hold it yet."""
    live = session.live
    snapshot = live.snapshot() if live is not None else None
    return None if live is None or snapshot == live.kept else snapshot
