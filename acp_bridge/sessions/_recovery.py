"""Crash recovery: settling the turns a stopped bridge left `running` (SESS-020).

A connection that claims a session owns it alone, so every turn still `running` there is a
turn whose bridge stopped (killed, crashed, or closed mid-turn). `recover_session` marks each
one `interrupted` with a closing note, and settles each of its open tool calls from the effect
ledger, which knows better than the display what happened:

- an effect key recorded `done`: the recorded outcome is shown (the effect ran);
- `started`, not done: `failed`, outcome unknown (sending the prompt again asks before the
  effect runs again: EFFECT-009);
- an effect key the journal recorded and the ledger has no record of: the ledger lost it
  (EFFECT-LOST-001), so `failed`, outcome unknown, exactly like `started`;
- a call that never got to run (no effect key journaled): `failed`, not run;
- a tool without side effects that was running: `failed`, not finished.

When the turn's last kept model call made tool calls whose results were never kept, their
results are added from the same facts, so the model history stays paired and true.
"""

from __future__ import annotations

import dataclasses
import logging

from acp_bridge.providers import AssistantTurn, MediaPart, ToolResult, ToolResults
from acp_bridge.sessions._records import StoredToolCall, StoredTurn
from acp_bridge.sessions._store import SessionStore
from acp_bridge.tools import TerminalContent, TextContent, media_parts
from acp_bridge.turn import EffectLedger, EffectRecord, EffectState, LedgerUnavailable, ToolStatus

__all__ = [
    "INTERRUPTED_NOTE",
    "NOT_FINISHED",
    "NOT_RUN",
    "OUTCOME_UNKNOWN",
    "recover_session",
    "settle_tool_call",
]

logger = logging.getLogger(__name__)

_Told = tuple[str, bool, tuple[MediaPart, ...]]

INTERRUPTED_NOTE = (
    "This turn was interrupted: acp-bridge stopped before it finished. What completed is "
    "shown above. Send the same prompt again to continue it; effects that already ran are "
    "not run again."
)
NOT_RUN = "Not run: acp-bridge stopped before this tool call ran."
OUTCOME_UNKNOWN = (
    "Outcome unknown: acp-bridge stopped while this tool call was running, so whether it "
    "changed anything is unknown. If the prompt is sent again, you are asked before it runs "
    "again."
)
NOT_FINISHED = "Not finished: acp-bridge stopped while this tool call was running."
RECORDED = "Recorded before acp-bridge stopped."


def settle_tool_call(
    call: StoredToolCall, record: EffectRecord | None, *, ledger_failed: bool = False
) -> tuple[StoredToolCall, str]:
    """The final state of an open tool call of an interrupted turn, and what the model is
    told about it. `record` is the ledger's record of its effect key (None: no record; with a
    journaled key, a record the ledger lost: EFFECT-LOST-001); `ledger_failed`: the ledger
    could not be read. Either way an effect's outcome is then unknown."""
    if call.effect_key is not None:
        if record is not None and record.state is EffectState.DONE and record.outcome:
            outcome = record.outcome
            kept = tuple(c for c in outcome.content if not isinstance(c, TerminalContent))
            settled = dataclasses.replace(
                call,
                status=ToolStatus.COMPLETED if outcome.ok else ToolStatus.FAILED,
                content=(*kept, TextContent(RECORDED)),
                raw_output=outcome.raw_output,
            )
            return settled, outcome.for_model
        return _failed(call, OUTCOME_UNKNOWN), OUTCOME_UNKNOWN
    if call.effect_key is None and call.status is ToolStatus.IN_PROGRESS:
        return _failed(call, NOT_FINISHED), NOT_FINISHED
    return _failed(call, NOT_RUN), NOT_RUN


def _failed(call: StoredToolCall, text: str) -> StoredToolCall:
    return dataclasses.replace(call, status=ToolStatus.FAILED, content=(TextContent(text),))


class _Effects:
    """Ledger look-ups for one recovery; a ledger that cannot be read means unknown."""

    def __init__(self, ledger: EffectLedger) -> None:
        self._ledger = ledger

    def settle(self, call: StoredToolCall) -> tuple[StoredToolCall, str]:
        if call.effect_key is None:
            return settle_tool_call(call, None)
        try:
            record = self._ledger.lookup(call.effect_key)
        except LedgerUnavailable:
            logger.exception("could not look up effect %s while recovering", call.effect_key)
            return settle_tool_call(call, None, ledger_failed=True)
        if record is None:
            logger.warning(
                "effect %s: the session journal recorded it as about to run, but the effect "
                "ledger has no record of it (lost?); its outcome counts as unknown",
                call.effect_key,
            )
        return settle_tool_call(call, record)

    def told(self, call: StoredToolCall) -> str:
        """What the model reads about a call that finished before the bridge stopped."""
        if call.effect_key is not None:
            try:
                record = self._ledger.lookup(call.effect_key)
            except LedgerUnavailable:
                record = None
            if record is not None and record.outcome is not None:
                return record.outcome.for_model
        shown = " ".join(c.text for c in call.content if isinstance(c, TextContent))
        return f"{call.title}: {call.status.value}. {shown}".strip()


def recover_session(store: SessionStore, session_id: str, ledger: EffectLedger) -> int:
    """Settles every `running` turn of a session this connection has just claimed.

    Returns how many turns were marked interrupted.
    """
    effects = _Effects(ledger)
    _check_ledger_age(store, session_id, ledger)
    count = 0
    for turn in store.running_turns(session_id):  # not the whole session (issue 15.3)
        settled: list[StoredToolCall] = []
        told: dict[str, _Told] = {}  # tool call id -> (for the model, is error, media)
        for call in turn.tool_calls:
            if call.finished:
                failed = call.status is ToolStatus.FAILED
                told[call.tool_call_id] = (effects.told(call), failed, media_parts(call.content))
                continue
            final, for_model = effects.settle(call)
            settled.append(final)
            # The media the call returned go to the model again (MCP-MEDIA-003).
            failed = final.status is ToolStatus.FAILED
            told[call.tool_call_id] = (for_model, failed, media_parts(final.content))
        results = _missing_results(turn, told)
        store.settle_interrupted(session_id, turn.seq, settled, results, INTERRUPTED_NOTE)
        logger.info("turn %s of %s was interrupted; settled", turn.turn_id, session_id)
        count += 1
    return count


def _check_ledger_age(store: SessionStore, session_id: str, ledger: EffectLedger) -> None:
    """EFFECT-LOST-002: a journal with effects from before the ledger file was started has
    outlived its ledger (deleted, truncated or replaced). Said on stderr; every key the journal
    recorded and the ledger lacks is outcome unknown anyway (EFFECT-LOST-001)."""
    if ledger.path is None:
        return
    older = store.effects_before(session_id, ledger.created_at)
    if older:
        logger.warning(
            "session %s: its journal recorded %d effect(s) before the effect ledger %s was "
            "started: the ledger was lost and started anew; those effects count as outcome "
            "unknown, and the user is asked before any of them runs again",
            session_id,
            older,
            EffectLedger.FILENAME,
        )


def _missing_results(turn: StoredTurn, told: dict[str, _Told]) -> ToolResults | None:
    """Results for the last kept model call's tool calls when none were kept.

    The engine shows a model call's tool calls in the model's order, one each, so the i-th
    shown call of a model call answers its i-th `ToolCall`.
    """
    if not turn.messages or not turn.model_calls:
        return None
    last = turn.messages[-1]
    if not (isinstance(last, AssistantTurn) and last.tool_calls):
        return None
    model_call = turn.model_calls[-1].model_call
    shown = [c for c in turn.tool_calls if c.model_call == model_call]
    results: list[ToolResult] = []
    for index, call in enumerate(last.tool_calls):
        text, error, media = NOT_RUN, True, tuple[MediaPart, ...]()
        if index < len(shown):
            text, error, media = told.get(shown[index].tool_call_id, (NOT_RUN, True, ()))
        results.append(ToolResult(call.call_id, call.name, text, error, media))
    return ToolResults(tuple(results))
