"""The turn's tail (issue 15.2): what runs between the model stream's end and the response.

Two pieces of it were the bridge's own per-turn cost: the context budget re-estimated the
whole history's tokens after every model call (O(history) in the tail), and the usage_update
of every model call was built and dumped through pydantic. Both are checked structurally
here, never by timing: the tally counts each history message once however long the session
grows, agrees with the full estimate on any history, and the directly built usage_update is
the pydantic path's output exactly (and valid against the official schema).
"""

from __future__ import annotations

import sys

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from loopback_http import LoopbackServer, drain, sse, sse_reply
from turn.turnkit import FakeProvider, RecordingSink, finish, make_request, start, text, usage

from acp_bridge import protocol as acp
from acp_bridge.agent._live import LiveUpdates, usage_meta, usage_wire
from acp_bridge.agent._sink import PeerTurnSink
from acp_bridge.providers import (
    AssistantTurn,
    Message,
    ModelRequest,
    TextDelta,
    ToolCall,
    ToolResult,
    ToolResults,
    Usage,
    UserTurn,
)
from acp_bridge.providers.http import HttpProviderOptions, OpenAIProvider
from acp_bridge.turn import (
    AgentText,
    AttemptUsage,
    ContextBudget,
    RetryPolicy,
    Turn,
    UsageReport,
    estimate_tokens,
)
from acp_bridge.turn._tally import TokenTally
from acp_bridge.wire import encode


def _round(n: int) -> list[Message]:
    call = ToolCall(f"c{n}", "read_file", {"path": f"src/f{n}.py"})
    return [
        UserTurn((f"prompt {n} " * (n % 7 + 1),), ()),
        AssistantTurn(f"answer {n}", tool_calls=(call,)),
        ToolResults((ToolResult(f"c{n}", "read_file", "x" * n),)),
        AssistantTurn(f"done {n} " * 3),
    ]


@pytest.mark.requirement("PERTURN-006")
def test_the_budget_counts_each_history_message_once_as_a_session_grows() -> None:
    budget = ContextBudget(window=10**9)
    history: list[Message] = []
    for n in range(300):
        history += _round(n)
        budget.observe(Usage(input_tokens=10**6, output_tokens=10), history)
        assert budget.overhead == 10**6 - estimate_tokens(history)
    assert budget.tally.counted == len(history)  # not 300 x the history: O(1) per turn


@pytest.mark.requirement("PERTURN-006")
def test_a_rewritten_history_is_counted_afresh() -> None:
    tally = TokenTally()
    history = [m for n in range(20) for m in _round(n)]
    assert tally.estimate(history) == estimate_tokens(history)
    compacted = [UserTurn(("summary of it all",), ()), *history[-8:]]  # new objects first
    assert tally.estimate(compacted) == estimate_tokens(compacted)
    assert tally.counted == len(history) + len(compacted)
    shorter = compacted[:3]
    assert tally.estimate(shorter) == estimate_tokens(shorter)


_texts = st.text(max_size=30)
_messages = st.one_of(
    st.builds(lambda p: UserTurn(tuple(p), ()), st.lists(_texts, max_size=3)),
    st.builds(
        lambda t, a: AssistantTurn(t, tool_calls=(ToolCall("c", "tool", {"a": a}),)),
        _texts,
        _texts,
    ),
    st.builds(lambda o: ToolResults((ToolResult("c", "tool", o),)), _texts),
)


@pytest.mark.requirement("PERTURN-006")
@given(st.lists(st.lists(_messages, max_size=6), max_size=6), st.data())
def test_the_tally_agrees_with_the_full_estimate(
    steps: list[list[Message]], data: st.DataObject
) -> None:
    tally = TokenTally()
    history: list[Message] = []
    for step in steps:
        if history and data.draw(st.booleans()):
            history = history[data.draw(st.integers(0, len(history))) :]  # rewritten
        history += step
        assert tally.estimate(history) == estimate_tokens(history)


def _report(cost: float | None) -> UsageReport:
    kept = Usage(input_tokens=1200, output_tokens=34, cost=cost)
    abandoned = Usage(input_tokens=1200, output_tokens=5)
    return UsageReport(
        2,
        kept,
        (AttemptUsage(1, "abandoned", abandoned, True), AttemptUsage(2, "completed", kept, True)),
    )


@pytest.mark.requirement("PERTURN-007")
@pytest.mark.parametrize("cost", [None, 0.25, 3])
def test_the_usage_update_is_the_pydantic_paths_output(
    cost: float | None, acp_wire: object
) -> None:
    live = LiveUpdates("bench", context_window=200_000)
    update = live.wire(_report(cost))
    assert isinstance(update, dict)
    fields: dict[str, object] = {
        "used": 1234,
        "size": 200_000,
        "field_meta": update["_meta"],
    }
    if cost is not None:
        fields["cost"] = acp.Cost(amount=cost, currency="USD")
    assert update == acp.to_wire(acp.UsageUpdate(**fields))  # type: ignore[arg-type]
    assert update["_meta"] == {"acpBridge": {**usage_meta(_report(cost)), "sizeSource": "config"}}
    note = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": update},
    }
    acp_wire.check(note)  # type: ignore[attr-defined]
    assert live.snapshot() == {
        "used": 1234,
        "size": 200_000,
        **({} if cost is None else {"cost": float(cost)}),
        "sizeSource": "config",
    }


@pytest.mark.requirement("PERTURN-007")
def test_a_negative_count_is_refused_as_the_model_refused_it() -> None:
    with pytest.raises(ValueError, match="no negative tokens"):
        usage_wire(-1, 10, None, {})


class _ImportSearches:
    """A meta-path finder that finds nothing and records every module searched for."""

    def __init__(self) -> None:
        self.searched: list[str] = []

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        self.searched.append(name)


@pytest.mark.requirement("PERTURN-008")
@pytest.mark.anyio
async def test_a_model_call_searches_for_no_module() -> None:
    """httpcore asks which event loop runs for each lock and shield it makes; without sniffio
    every ask was a failed import (a search of sys.path, in every turn's tail)."""
    replies = [
        sse_reply(
            sse({"choices": [{"index": 0, "delta": {"content": f"answer {n}"}}]}),
            sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
            sse("[DONE]"),
        )
        for n in range(4)
    ]
    request = ModelRequest(model="m", messages=(UserTurn(("hi",), ()),), tools=())
    finder = _ImportSearches()
    with anyio.fail_after(60):
        async with LoopbackServer(replies) as server:
            options = HttpProviderOptions(base_url=f"{server.base_url}/v1", model="m")
            async with OpenAIProvider(options) as provider:
                events, error = await drain(provider.stream(request))  # warm: first imports
                assert error is None
                assert events
                sys.meta_path.insert(0, finder)
                try:
                    for _ in range(3):
                        events, error = await drain(provider.stream(request))
                        assert error is None
                        assert any(isinstance(e, TextDelta) for e in events)
                finally:
                    sys.meta_path.remove(finder)
    assert finder.searched == []


@pytest.mark.requirement("PERTURN-009")
@pytest.mark.anyio
@pytest.mark.parametrize("stall_after", [None, 30.0])
async def test_a_model_call_ends_without_cancelling_a_scope(
    stall_after: float | None, cancels: list[str]
) -> None:
    """The progress watch beside each model call stops when the stream is done; it is not
    cancelled (anyio's `CancelScope.cancel()` formats the calling task's repr, every call)."""
    script = [start(), *text("two ", "model calls"), usage(), finish()]
    provider = FakeProvider(script, script)
    policy = RetryPolicy(stall_notice_after=stall_after)
    with anyio.fail_after(30):
        for _ in range(2):
            result = await Turn(make_request(provider, RecordingSink(), policy=policy)).run()
            assert result.stop_reason.value == "end_turn"
    assert cancels == []


class _Editor:
    """Records every notification the sink writes."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []

    async def notify(self, method: str, params: object) -> None:
        self.lines.append(encode({"jsonrpc": "2.0", "method": method, "params": params}))

    async def notify_encoded(self, line: bytes, message: object) -> None:
        self.lines.append(line)

    async def notify_lines(self, lines: list[bytes]) -> None:
        self.lines.extend(lines)


@pytest.mark.requirement("PERTURN-009")
@pytest.mark.anyio
async def test_a_turns_sink_stops_its_writer_without_cancelling_a_scope(
    cancels: list[str],
) -> None:
    """Leaving `running()` with everything written ends the chunk writer by waking it, not by
    cancelling its task group; every chunk is still on the wire first (AGENT-ORDER-001)."""
    editor = _Editor()
    sink = PeerTurnSink(editor, "s")  # type: ignore[arg-type]
    with anyio.fail_after(30):
        for turn in range(3):
            async with sink.running():
                for n in range(5):
                    await sink.send_update(AgentText(f"<{turn}.{n}>", f"m{turn}"))
    assert cancels == []
    written = b"".join(editor.lines).decode()
    assert all(f"<{t}.{n}>" in written for t in range(3) for n in range(5))
