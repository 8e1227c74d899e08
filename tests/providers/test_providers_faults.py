"""Fault injection: the CLI spec parser and FaultInjectingProvider over fake and real streams."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import anyio
import pytest
from loopback_http import LoopbackServer, drain, sse, sse_reply

from acp_bridge.providers import (
    FaultKind,
    Finish,
    FinishReason,
    ModelRequest,
    Phase,
    StreamEvent,
    StreamStart,
    TextDelta,
    ToolCallComplete,
    ToolCallDelta,
    ToolCallStart,
    UserTurn,
)
from acp_bridge.providers._faults import (
    FaultInjectingProvider,
    FaultPlan,
    FaultPoint,
    parse_fault_plan,
)
from acp_bridge.providers.http import HttpProviderOptions, OpenAIProvider

START = StreamStart("fake", "fake-model")
TEXT: list[StreamEvent] = [START, TextDelta("Hel"), TextDelta("lo"), Finish(FinishReason.STOP)]
TOOL: list[StreamEvent] = [
    START,
    ToolCallStart("c1", "read_file", 0),
    ToolCallDelta("c1", 0, '{"path":'),
    ToolCallDelta("c1", 0, '"a"}'),
    ToolCallComplete("c1", "read_file", {"path": "a"}),
    Finish(FinishReason.TOOL_CALLS),
]
WHOLE_TOOL: list[StreamEvent] = [
    START,
    ToolCallStart("c1", "read_file", 0),
    ToolCallComplete("c1", "read_file", {}),
    Finish(FinishReason.TOOL_CALLS),
]


class FakeProvider:
    """Plays a fixed event list and records whether its stream was closed."""

    def __init__(self, events: Sequence[StreamEvent]) -> None:
        self._events = events
        self.closed = 0

    @property
    def name(self) -> str:
        return "fake"

    @property
    def model(self) -> str:
        return "fake-model"

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        try:
            for event in self._events:
                await anyio.lowlevel.checkpoint()
                yield event
        finally:
            self.closed += 1


def request(attempt: int = 1) -> ModelRequest:
    return ModelRequest(model="", messages=[UserTurn(("hi",))], attempt=attempt)


@pytest.mark.parametrize(
    ("spec", "plan"),
    [
        ("after-events:5", FaultPlan(FaultPoint.AFTER_EVENTS, events=5)),
        ("in-tool-call", FaultPlan(FaultPoint.IN_TOOL_CALL)),
        ("before-finish@attempts=3", FaultPlan(FaultPoint.BEFORE_FINISH, attempts=3)),
        (" after-events:1@attempts=2 ", FaultPlan(FaultPoint.AFTER_EVENTS, events=1, attempts=2)),
    ],
)
def test_parse_fault_plan(spec: str, plan: FaultPlan) -> None:
    assert parse_fault_plan(spec) == plan
    assert parse_fault_plan(str(plan)) == plan


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("after-events", "needs a count"),
        ("in-tool-call:3", "takes no count"),
        ("mid-stream", "unknown fault point"),
        ("before-finish@attempts=0", "at least one attempt"),
        ("after-events:0", "at least 1"),
        ("before-finish@tries=2", "expected POINT"),
    ],
)
def test_parse_fault_plan_rejects(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_fault_plan(spec)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-FAULT-001")
@pytest.mark.parametrize(
    ("plan", "events", "expected"),
    [
        (FaultPlan(FaultPoint.AFTER_EVENTS, events=2), TEXT, TEXT[:2]),
        (FaultPlan(FaultPoint.BEFORE_FINISH), TEXT, TEXT[:3]),
        (FaultPlan(FaultPoint.IN_TOOL_CALL), TOOL, TOOL[:3]),
        (FaultPlan(FaultPoint.IN_TOOL_CALL), WHOLE_TOOL, WHOLE_TOOL[:2]),
    ],
    ids=["after-events", "before-finish", "in-tool-call", "in-whole-tool-call"],
)
async def test_cut_points(
    plan: FaultPlan, events: list[StreamEvent], expected: list[StreamEvent]
) -> None:
    inner = FakeProvider(events)
    provider = FaultInjectingProvider(inner, plan)
    got, error = await drain(provider.stream(request()))
    assert got == expected
    assert error is not None
    assert (error.kind, error.phase, error.retryable) == (
        FaultKind.STREAM_INTERRUPTED,
        Phase.STREAM,
        True,
    )
    assert "injected fault" in error.message
    assert inner.closed == 1
    assert not any(isinstance(e, ToolCallComplete) for e in got)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-FAULT-001")
async def test_only_the_planned_attempts_break() -> None:
    inner = FakeProvider(TEXT)
    provider = FaultInjectingProvider(inner, FaultPlan(FaultPoint.BEFORE_FINISH, attempts=2))
    outcomes = []
    for attempt in (1, 2, 3):
        events, error = await drain(provider.stream(request(attempt)))
        outcomes.append((len(events), error is None))
    assert outcomes == [(3, False), (3, False), (4, True)]
    assert (provider.name, provider.model) == ("fake", "fake-model")


@pytest.mark.anyio
async def test_streams_too_short_to_reach_the_point_pass_through() -> None:
    provider = FaultInjectingProvider(
        FakeProvider(TEXT), FaultPlan(FaultPoint.AFTER_EVENTS, events=4)
    )
    assert await drain(provider.stream(request())) == (TEXT, None)
    tools = FaultInjectingProvider(FakeProvider(TEXT), FaultPlan(FaultPoint.IN_TOOL_CALL))
    assert await drain(tools.stream(request())) == (TEXT, None)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-FAULT-001")
async def test_breaks_a_real_http_stream_inside_the_first_tool_call() -> None:
    def chunk(delta: dict[str, object], finish: str | None = None) -> str:
        return sse(
            {
                "id": "c",
                "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )

    def tool(fragment: str, **head: object) -> str:
        return chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        **head,
                        "function": {
                            "arguments": fragment,
                            **({"name": "read_file"} if head else {}),
                        },
                    }
                ]
            }
        )

    body = [
        tool("", id="call_A", type="function"),
        tool('{"path":'),
        tool('"a"}'),
        chunk({}, "tool_calls"),
        sse("[DONE]"),
    ]
    async with LoopbackServer([sse_reply(*body), sse_reply(*body)]) as server:
        inner = OpenAIProvider(HttpProviderOptions("m", base_url=f"{server.base_url}/v1"))
        async with inner:
            provider = FaultInjectingProvider(inner, parse_fault_plan("in-tool-call"))
            first, error = await drain(provider.stream(request(1)))
            second, clean = await drain(provider.stream(request(2)))
    assert first == [
        StreamStart("openai", "m", "c"),
        ToolCallStart("call_A", "read_file", 0),
        ToolCallDelta("call_A", 0, '{"path":'),
    ]
    assert error is not None
    assert error.kind is FaultKind.STREAM_INTERRUPTED
    assert clean is None
    assert second[-2:] == [
        ToolCallComplete("call_A", "read_file", {"path": "a"}, '{"path":"a"}'),
        Finish(FinishReason.TOOL_CALLS, "tool_calls"),
    ]
    assert len(server.requests) == 2
