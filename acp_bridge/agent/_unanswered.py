"""A completed turn whose response was never written, and its prompt sent again.

A turn's completion is committed to the journal before its `session/prompt` response is
written, and the response is marked written (`answered`) right after. A bridge killed in
between leaves a completed turn that the editor never heard the end of; the editor sends the
same prompt again after the restart. That prompt is the same request, not a new one: it is
answered from the journal, with the turn's stored stop reason, and no model call runs and no
effect (SESS-UNANSWERED-001). Its updates are not sent again: they were written before the
completion was committed (AGENT-ORDER-001), and `session/load` replays them; the last
usage_update, which rode with the lost response, is in the store (USAGE-006) and is replayed
by that load too.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from acp_bridge._json import JsonObject
from acp_bridge.agent._light import prompt_response_wire
from acp_bridge.sessions import SessionStore, TurnStart

__all__ = ["journal_response", "marks_answered"]

_log = logging.getLogger("acp_bridge.agent")


def journal_response(start: TurnStart) -> JsonObject:
    """The response of a turn that completed before, from what the journal kept."""
    assert start.unanswered is not None
    report: JsonObject = {
        "turnId": start.turn_id,
        "idPrefix": start.id_prefix,
        "rerun": False,
        "answeredFromJournal": True,
        "modelCalls": 0,
        "retries": 0,
        "billedAttempts": 0,
        "attempts": [],
        "effects": [],
    }
    return prompt_response_wire(start.unanswered, {"acpBridge": report})


def marks_answered(
    store: SessionStore, session_id: str, start: TurnStart
) -> Callable[[], Awaitable[None]]:
    """The follow-up that records the response as written (runs once it is on the wire)."""

    async def mark() -> None:
        try:
            store.mark_answered(session_id, start.seq)
        except Exception:
            # Left unanswered: the same prompt sent again is answered from the journal, which
            # is right for a prompt whose answer the editor may not have.
            _log.exception("could not record that turn %s was answered", start.turn_id)

    return mark
