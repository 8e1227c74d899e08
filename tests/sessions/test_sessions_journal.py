"""What is durable when: turns journaled as they run, recovery from the ledger, the transcript."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from bridge import RecordingProvider, scripted_config
from sessions.sesskit import load, serving

from acp_bridge._json import JsonObject
from acp_bridge.providers import AssistantTurn, ModelRequest, StreamEvent, ToolResults, UserTurn
from acp_bridge.providers.scripted import ScriptedProvider, loads_script
from acp_bridge.sessions import (
    INTERRUPTED_NOTE,
    NOT_FINISHED,
    NOT_RUN,
    OUTCOME_UNKNOWN,
    DisplaySegment,
    PromptShown,
    SessionStore,
    StoredModelCall,
    StoredToolCall,
    StoredTurn,
    TurnState,
    settle_tool_call,
    transcript,
)
from acp_bridge.tools import (
    TerminalContent,
    TextContent,
    ToolContext,
    ToolKind,
    ToolOutcome,
    ToolPreview,
    ToolRegistry,
    default_tools,
)
from acp_bridge.turn import AgentText, AgentThought, EffectKey, EffectLedger, ToolStatus

pytestmark = pytest.mark.anyio

PROBE_SCRIPT = """{
  "name": "probe",
  "description": "Calls the probe tool, then a second model call is broken once",
  "calls": [
    {"attempts": [[
      {"thought": "I should probe.", "signature": "sig-1"},
      {"text": "Probing. "},
      {"tool_call": "probe", "arguments": {"n": 1}},
      {"finish": "auto"}
    ]]},
    {"attempts": [
      [{"text": ["Abandoned partial "]}, {"break": "stream_interrupted"}],
      [{"text": "Probed."}, {"finish": "stop"}]
    ]}
  ]
}"""


@dataclass
class Snapshots:
    """What a second connection to the store saw at chosen moments."""

    state: Path
    seen: list[tuple[str, list[StoredTurn]]] = field(default_factory=list)
    ledger: list[Any] = field(default_factory=list)

    def take(self, moment: str) -> None:
        with SessionStore(self.state) as store:
            sessions = store.list_sessions().sessions
            self.seen.append((moment, store.turns(sessions[0].session_id)))


class ProbeTool:
    """A side-effecting tool that looks at the store and the ledger while it runs."""

    name = "probe"
    description = "Probes."
    parameters: JsonObject = {"type": "object", "properties": {"n": {"type": "integer"}}}
    kind = ToolKind.EXECUTE
    side_effect = True

    def __init__(self, snapshots: Snapshots) -> None:
        self.snapshots = snapshots

    async def preview(self, arguments: JsonObject, ctx: ToolContext) -> ToolPreview:
        return ToolPreview(title="Probe", kind=ToolKind.EXECUTE)

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolOutcome:
        self.snapshots.take("tool runs")
        with EffectLedger(self.snapshots.state) as ledger:
            self.snapshots.ledger.append(ledger.lookup(str(ctx.effect_key)))
        return ToolOutcome(ok=True, for_model="probed", content=(TextContent("probed"),))


class SnapshotProvider(RecordingProvider):
    def __init__(self, inner: ScriptedProvider, snapshots: Snapshots) -> None:
        super().__init__(inner)
        self.snapshots = snapshots

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.snapshots.take(f"model called, attempt {request.attempt}")
        return super().stream(request)


@pytest.mark.requirement("SESS-010")
@pytest.mark.requirement("SESS-011")
async def test_each_step_is_durable_before_the_next_one_starts(tmp_path: Path) -> None:
    state = tmp_path / "state"
    snapshots = Snapshots(state)
    provider = SnapshotProvider(ScriptedProvider(loads_script(PROBE_SCRIPT)), snapshots)
    tools = ToolRegistry([*default_tools(), ProbeTool(snapshots)])
    async with serving(scripted_config(state, provider, tools=tools)) as editor:
        await editor.initialize()
        session_id = await editor.new_session(tmp_path)
        reply = await editor.prompt(session_id, "probe it")
        assert reply["result"]["stopReason"] == "end_turn"
    moments = [moment for moment, _ in snapshots.seen]
    assert moments == [
        "model called, attempt 1",
        "tool runs",
        "model called, attempt 1",
        "model called, attempt 2",
    ]
    # Before the model is called: the turn is running and its prompt is history.
    (turn,) = snapshots.seen[0][1]
    assert (turn.state, turn.prompt, turn.messages) == (
        TurnState.RUNNING,
        ({"type": "text", "text": "probe it"},),
        (UserTurn(("probe it",)),),
    )
    # While the tool runs: the kept model call, and the call in progress with its key,
    # whose ledger record says started.
    (turn,) = snapshots.seen[1][1]
    assert [type(m) for m in turn.messages] == [UserTurn, AssistantTurn]
    (call,) = turn.tool_calls
    assert (call.status, call.effect_key) == (ToolStatus.IN_PROGRESS, snapshots.ledger[0].key)
    assert snapshots.ledger[0].state.value == "started"
    # Before model call 2: the results are history; the abandoned attempt never is.
    (turn,) = snapshots.seen[2][1]
    assert [type(m) for m in turn.messages] == [UserTurn, AssistantTurn, ToolResults]
    (turn,) = snapshots.seen[3][1]
    assert len(turn.messages) == 3
    with SessionStore(state) as store:
        (final,) = store.turns(session_id)
    assert final.state is TurnState.COMPLETED
    assert final.stop_reason == "end_turn"
    texts = [s.text for m in final.model_calls for s in m.display]
    assert texts == ["I should probe.", "Probing. ", "Probed."]
    assert "Abandoned" not in str(final.messages)
    (first, second) = final.model_calls
    assert (first.attempt, second.attempt) == (1, 2)
    assert first.message.thoughts[0].signature == "sig-1"


def _call(status: ToolStatus, key: str | None = None) -> StoredToolCall:
    return StoredToolCall(
        "t1", 1, 1, "Run `make`", ToolKind.EXECUTE, status, raw_input={}, effect_key=key
    )


@pytest.mark.requirement("SESS-020")
def test_open_tool_calls_are_settled_from_the_ledger(tmp_path: Path) -> None:
    with EffectLedger(tmp_path) as ledger:
        done = EffectKey.derive("s-turn1", "run_command", {"command": "make"}, 0)
        started = EffectKey.derive("s-turn1", "run_command", {"command": "make"}, 1)
        ledger.record_started(done, session_id="s", mode="ask")
        outcome = ToolOutcome(
            ok=True, for_model="built", content=(TextContent("ok"), TerminalContent("term-1"))
        )
        ledger.record_done(done, outcome)
        ledger.record_started(started, session_id="s", mode="ask")
        recorded, told = settle_tool_call(
            _call(ToolStatus.IN_PROGRESS, str(done)), ledger.lookup(done)
        )
        unknown, told_unknown = settle_tool_call(
            _call(ToolStatus.PENDING, str(started)), ledger.lookup(started)
        )
    assert (recorded.status, told) == (ToolStatus.COMPLETED, "built")
    assert [type(c) for c in recorded.content] == [TextContent, TextContent]  # no terminal
    assert (unknown.status, told_unknown) == (ToolStatus.FAILED, OUTCOME_UNKNOWN)
    assert unknown.content == (TextContent(OUTCOME_UNKNOWN),)
    # A journaled key the ledger has no record of was lost with the ledger (EFFECT-LOST-001).
    lost, told_lost = settle_tool_call(_call(ToolStatus.IN_PROGRESS, "k" * 64), None)
    assert (lost.content, told_lost) == ((TextContent(OUTCOME_UNKNOWN),), OUTCOME_UNKNOWN)
    read, _ = settle_tool_call(_call(ToolStatus.IN_PROGRESS), None)
    assert read.content == (TextContent(NOT_FINISHED),)
    pending, _ = settle_tool_call(_call(ToolStatus.PENDING), None)
    assert pending.content == (TextContent(NOT_RUN),)
    blind, _ = settle_tool_call(_call(ToolStatus.IN_PROGRESS, "k"), None, ledger_failed=True)
    assert blind.content == (TextContent(OUTCOME_UNKNOWN),)


@pytest.mark.requirement("SESS-030")
def test_the_transcript_orders_prompt_segments_calls_and_note() -> None:
    shown = DisplaySegment
    turn = StoredTurn(
        seq=1,
        ordinal=1,
        turn_id="s-turn1",
        id_prefix="s-turn1",
        state=TurnState.INTERRUPTED,
        superseded=False,
        prompt=({"type": "text", "text": "go"},),
        stop_reason=None,
        note=INTERRUPTED_NOTE,
        started_at=0.0,
        ended_at=None,
        model_calls=(
            StoredModelCall(
                1,
                2,
                AssistantTurn("ab"),
                (
                    shown("thought", "s-turn1-m1-a2-thought", "hm"),
                    shown("text", "s-turn1-m1-a2", "a"),
                    shown("thought", "s-turn1-m1-a2-thought", "hm2"),
                    shown("text", "s-turn1-m1-a2", "b"),
                ),
            ),
        ),
        tool_calls=(_call(ToolStatus.COMPLETED),),
    )
    assert list(transcript([turn])) == [
        PromptShown(({"type": "text", "text": "go"},), "s-turn1-user"),
        AgentThought("hm", "s-turn1-m1-a2-thought"),
        AgentText("a", "s-turn1-m1-a2"),
        AgentThought("hm2", "s-turn1-m1-a2-thought"),
        AgentText("b", "s-turn1-m1-a2"),
        _call(ToolStatus.COMPLETED),
        AgentText(INTERRUPTED_NOTE, "s-turn1-note"),
    ]


@pytest.mark.requirement("SESS-020")
async def test_a_turn_cut_off_with_its_connection_is_interrupted_on_load(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    async with serving(scripted_config(state)) as editor:
        await editor.initialize()
        session_id = await editor.new_session(tmp_path)
        editor.hold_permissions()
        async with anyio.create_task_group() as tg:
            tg.start_soon(editor.prompt, session_id, "/help-desk-refund-file")
            with anyio.fail_after(10):
                await editor.permission_asked.wait()
            tg.cancel_scope.cancel()  # the connection ends while the turn waits
    async with serving(scripted_config(state)) as editor:
        await editor.initialize()
        reply, replayed = await load(editor, session_id, tmp_path)
        assert "result" in reply
    (call,) = [u for u in replayed if u["sessionUpdate"] == "tool_call"]
    assert call["status"] == "failed"
    assert replayed[-1]["content"]["text"] == INTERRUPTED_NOTE
    with SessionStore(state) as store:
        (turn,) = store.turns(session_id)
        history = store.history(session_id)
    assert turn.state is TurnState.INTERRUPTED
    # The interrupted round is answered in history, so the model sees a paired conversation.
    assert isinstance(history[-1], ToolResults)
    assert history[-1].results[0].is_error
