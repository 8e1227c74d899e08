"""Recording a running turn: the engine's `TurnSink` and `TurnJournal`, backed by the store.

`TurnRecorder` sits between the turn engine and the editor's sink. A `tool_call` is written to
the store once the editor has it (never one it did not see: TURN-SHOWN-001), before it can be
approved; every later update of it is written before it is forwarded, so a call is durably about
to run (with its effect key) before it runs (SESS-011). Message and
thought chunks are only buffered: when the engine keeps an attempt (`model_call_kept`), the
chunks of that attempt become the model call's display segments, written with its
`AssistantTurn` in one statement; an abandoned attempt's chunks are dropped with it (SESS-010).

A kept answer that makes tool calls is committed when it is kept, before any of its calls is
shown or runs (SESS-011). One without tool calls is the turn's last: it is held
(`take_answer`) and written in the transaction that records the turn's end, one commit
instead of two in the turn's tail (STORE4-001). Any other write of the turn writes a held
answer first, so the journal's order is always the order things were kept.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from acp_bridge.providers import AssistantTurn, TextParts, ToolResults
from acp_bridge.sessions._records import DisplaySegment, StoredModelCall, StoredToolCall, TurnStart
from acp_bridge.sessions._store import SessionStore
from acp_bridge.turn import (
    AgentText,
    AgentThought,
    CompactionRecord,
    PermissionDecision,
    PermissionOption,
    ToolCallChanged,
    ToolCallShown,
    TurnSink,
    TurnUpdate,
    message_id,
    thought_id,
)

__all__ = ["TurnRecorder"]


class TurnRecorder:
    """Records one turn as it runs (implements `TurnSink` and `TurnJournal`)."""

    def __init__(
        self, store: SessionStore, session_id: str, start: TurnStart, sink: TurnSink
    ) -> None:
        self._store = store
        self._session_id = session_id
        self._start = start
        self._sink = sink
        # (kind, message id, text) runs in order; consecutive chunks of one message share a
        # run, kept as few objects however many deltas it took (MEM-002).
        self._chunks: list[tuple[str, str, TextParts]] = []
        self._calls: dict[str, StoredToolCall] = {}
        self._model_call = 0  # the model call whose attempt was kept last
        self._earlier: frozenset[str] | None = None  # effect keys of earlier runs, read once
        self._answer: StoredModelCall | None = None  # kept, no tool calls: written at the end

    @property
    def start(self) -> TurnStart:
        """The turn this records."""
        return self._start

    # -- TurnSink --------------------------------------------------------------------------

    async def send_update(self, update: TurnUpdate) -> None:
        # A reset marker carries no text and is never replayed. One isinstance per kind:
        # this is the per-chunk hot path.
        if isinstance(update, AgentText):
            if update.text:
                self._chunk("text", update.message_id, update.text)
        elif isinstance(update, AgentThought):
            if update.text:
                self._chunk("thought", update.message_id, update.text)
        elif isinstance(update, ToolCallShown):
            # Written once it is on the wire, never before: a tool_call the editor never saw
            # (cancelled while queued) is never replayed (TURN-SHOWN-001). A pending call has
            # not started, so nothing of its effect depends on this record yet (SESS-011).
            await self._sink.send_update(update)
            self._save(
                StoredToolCall(
                    tool_call_id=update.tool_call_id,
                    model_call=self._model_call,
                    position=len(self._calls) + 1,
                    title=update.title,
                    kind=update.kind,
                    status=update.status,
                    content=update.content,
                    locations=update.locations,
                    raw_input=update.raw_input,
                )
            )
            return
        elif isinstance(update, ToolCallChanged):
            self._changed(update)
        # Usage, notices and plans are live: the plan is replayed from its tool call.
        await self._sink.send_update(update)  # after it is durable

    async def request_permission(
        self, call: ToolCallShown, options: Sequence[PermissionOption]
    ) -> PermissionDecision:
        return await self._sink.request_permission(call, options)

    # -- TurnJournal -----------------------------------------------------------------------

    def model_call_kept(self, model_call: int, attempt: int, message: AssistantTurn) -> None:
        prefix = self._start.id_prefix
        kept = {message_id(prefix, model_call, attempt), thought_id(prefix, model_call, attempt)}
        segments: list[DisplaySegment] = []
        run: list[str] = []
        current: tuple[str, str] | None = None
        for kind, chunk_id, parts in self._chunks:
            if chunk_id not in kept:
                continue  # an abandoned attempt's chunk
            if (kind, chunk_id) != current:
                if current is not None:
                    segments.append(DisplaySegment(current[0], current[1], "".join(run)))
                current, run = (kind, chunk_id), []
            run.append(parts.text())
        if current is not None:
            segments.append(DisplaySegment(current[0], current[1], "".join(run)))
        self._chunks.clear()
        self._model_call = model_call
        record = StoredModelCall(model_call, attempt, message, tuple(segments))
        self._write_answer()
        if message.tool_calls:  # committed before any of its calls is shown (SESS-011)
            self._store.add_message(self._session_id, self._start.seq, message, model_call=record)
        else:  # the turn's last answer: written with the turn's end (STORE4-001)
            self._answer = record

    def take_answer(self) -> StoredModelCall | None:
        """The turn's last kept answer (one without tool calls) when it is not written yet:
        the caller writes it in the transaction of the turn's end (`SessionStore.end_turn`)."""
        answer, self._answer = self._answer, None
        return answer

    def tool_results_kept(self, message: ToolResults) -> None:
        self._write_answer()
        self._store.add_message(self._session_id, self._start.seq, message)

    def recorded_effect(self, effect_key: str) -> bool:
        """EFFECT-LOST-001: an earlier run of this turn journaled the key as about to run."""
        if self._start.retry_of is None:
            return False  # a turn's first run: no earlier run journaled any of its keys
        if self._earlier is None:
            self._earlier = self._store.earlier_effect_keys(self._session_id, self._start)
        return effect_key in self._earlier

    def compacted(self, record: CompactionRecord) -> None:
        """A compaction is durable before the history changes (COMPACT-005)."""
        self._write_answer()
        self._store.add_compaction(self._session_id, self._start.seq, record)

    def tool_call_starting(self, tool_call_id: str, effect_key: str | None) -> None:
        call = self._calls.get(tool_call_id)
        if call is not None and effect_key is not None:
            # On disk before the ledger records the key started (SESS-011, SESS-001).
            self._save(dataclasses.replace(call, effect_key=effect_key), durable=True)

    # -- helpers ---------------------------------------------------------------------------

    def _chunk(self, kind: str, chunk_id: str, text: str) -> None:
        chunks = self._chunks
        if chunks and chunks[-1][1] == chunk_id and chunks[-1][0] == kind:
            chunks[-1][2].append(text)
        else:
            parts = TextParts()
            parts.append(text)
            chunks.append((kind, chunk_id, parts))

    def _changed(self, update: ToolCallChanged) -> None:
        call = self._calls.get(update.tool_call_id)
        if call is None:
            return
        changes: dict[str, object] = {}
        if update.status is not None:
            changes["status"] = update.status
        if update.title is not None:
            changes["title"] = update.title
        if update.content is not None:
            changes["content"] = update.content
        if update.locations is not None:
            changes["locations"] = update.locations
        if update.raw_output is not None:
            changes["raw_output"] = update.raw_output
        self._save(dataclasses.replace(call, **changes))  # type: ignore[arg-type]

    def _write_answer(self) -> None:
        """A held answer is written before anything kept after it (none is, in practice)."""
        answer = self.take_answer()
        if answer is not None:
            self._store.add_message(
                self._session_id, self._start.seq, answer.message, model_call=answer
            )

    def _save(self, call: StoredToolCall, *, durable: bool = False) -> None:
        self._write_answer()
        self._store.save_tool_call(self._session_id, self._start.seq, call, durable=durable)
        self._calls[call.tool_call_id] = call
