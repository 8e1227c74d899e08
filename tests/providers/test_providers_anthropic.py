"""AnthropicProvider against a real loopback HTTP server: blocks, thinking, errors, faults."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from loopback_http import (
    Fin,
    LoopbackServer,
    Reply,
    Rst,
    WaitFor,
    assert_cut_after,
    assert_fault,
    sse,
    sse_reply,
    stream_at,
)

from acp_bridge.providers import (
    AssistantTurn,
    FaultKind,
    Finish,
    FinishReason,
    ModelRequest,
    ModelStreamError,
    StreamEvent,
    StreamStart,
    TextDelta,
    Thought,
    ThoughtDelta,
    ToolCall,
    ToolCallComplete,
    ToolCallDelta,
    ToolCallStart,
    ToolResult,
    ToolResults,
    ToolSpec,
    Usage,
    UserTurn,
)
from acp_bridge.providers.http import AnthropicProvider

REQUEST = ModelRequest(model="", messages=[UserTurn(("hi",))])
START = StreamStart("anthropic", "claude-test", "msg_1")
# message_start reports the input usage; the decoder passes it on at once (10.15).
START_USAGE = Usage(input_tokens=124, output_tokens=5, cached_input_tokens=100)
OPENING = (START, START_USAGE)


def event(kind: str, **fields: Any) -> str:
    return sse({"type": kind, **fields}, event=kind)


MESSAGE_START = event(
    "message_start",
    message={
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": None,
        "usage": {
            "input_tokens": 2,
            "cache_creation_input_tokens": 22,
            "cache_read_input_tokens": 100,
            "output_tokens": 5,
        },
    },
)
PING = event("ping")
MESSAGE_STOP = event("message_stop")


def block_start(index: int, block: dict[str, Any]) -> str:
    return event("content_block_start", index=index, content_block=block)


def delta(index: int, **fields: Any) -> str:
    return event("content_block_delta", index=index, delta=fields)


def text(index: int, value: str) -> str:
    return delta(index, type="text_delta", text=value)


def block_stop(index: int) -> str:
    return event("content_block_stop", index=index)


def message_delta(stop_reason: str, output_tokens: int = 61) -> str:
    return event(
        "message_delta",
        delta={"stop_reason": stop_reason, "stop_sequence": None},
        usage={"output_tokens": output_tokens},
    )


def tool_use(index: int, call_id: str, name: str) -> str:
    return block_start(index, {"type": "tool_use", "id": call_id, "name": name, "input": {}})


def json_delta(index: int, fragment: str) -> str:
    return delta(index, type="input_json_delta", partial_json=fragment)


FINAL_USAGE = Usage(input_tokens=124, output_tokens=61, cached_input_tokens=100)


async def run(
    *replies: Reply,
    request: ModelRequest = REQUEST,
    on_event: Callable[[StreamEvent], None] | None = None,
    **options: Any,
) -> tuple[list[StreamEvent], ModelStreamError | None, LoopbackServer]:
    settings: dict[str, Any] = {"model": "claude-test", **options}
    return await stream_at(AnthropicProvider, "", replies, request, on_event=on_event, **settings)


@pytest.mark.anyio
async def test_text_stream_with_pings_and_usage() -> None:
    events, error, server = await run(
        sse_reply(
            MESSAGE_START,
            block_start(0, {"type": "text", "text": ""}),
            PING,
            text(0, "Hel"),
            text(0, "lo"),
            block_stop(0),
            message_delta("end_turn"),
            MESSAGE_STOP,
        )
    )
    assert error is None
    assert events == [
        *OPENING,
        TextDelta("Hel"),
        TextDelta("lo"),
        FINAL_USAGE,
        Finish(FinishReason.STOP, "end_turn"),
    ]
    sent = server.requests[0]
    assert (sent.method, sent.path) == ("POST", "/v1/messages")
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert "x-api-key" not in sent.headers


@pytest.mark.anyio
@pytest.mark.requirement("PROV-TOOL-001")
async def test_thinking_signature_and_parallel_tool_use() -> None:
    events, error, _ = await run(
        sse_reply(
            MESSAGE_START,
            block_start(0, {"type": "thinking", "thinking": ""}),
            delta(0, type="thinking_delta", thinking="Let me look."),
            delta(0, type="signature_delta", signature="EqQBsig"),
            block_stop(0),
            block_start(1, {"type": "redacted_thinking", "data": "opaque"}),
            block_stop(1),
            tool_use(2, "toolu_A", "read_file"),
            json_delta(2, ""),
            json_delta(2, '{"path": "a'),
            json_delta(2, '"}'),
            block_stop(2),
            tool_use(3, "toolu_B", "list_directory"),
            block_stop(3),
            message_delta("tool_use"),
            MESSAGE_STOP,
        )
    )
    assert error is None
    assert events == [
        *OPENING,
        ThoughtDelta("Let me look."),
        ThoughtDelta("", signature="EqQBsig"),
        ThoughtDelta("", redacted_data="opaque"),
        ToolCallStart("toolu_A", "read_file", 0),
        ToolCallDelta("toolu_A", 0, '{"path": "a'),
        ToolCallDelta("toolu_A", 0, '"}'),
        ToolCallComplete("toolu_A", "read_file", {"path": "a"}, '{"path": "a"}'),
        ToolCallStart("toolu_B", "list_directory", 1),
        ToolCallComplete("toolu_B", "list_directory", {}, ""),
        FINAL_USAGE,
        Finish(FinishReason.TOOL_CALLS, "tool_use"),
    ]


@pytest.mark.anyio
@pytest.mark.requirement("PROV-FILTER-001")
@pytest.mark.parametrize(
    ("stop_reason", "reason"),
    [
        ("refusal", FinishReason.REFUSAL),
        ("max_tokens", FinishReason.LENGTH),
        ("pause_turn", FinishReason.PAUSE),
        ("something_new", FinishReason.UNKNOWN),
    ],
)
async def test_stop_reasons(stop_reason: str, reason: FinishReason) -> None:
    events, error, _ = await run(sse_reply(MESSAGE_START, message_delta(stop_reason), MESSAGE_STOP))
    assert error is None
    assert events[-1] == Finish(reason, stop_reason)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-INBAND-001")
@pytest.mark.parametrize(
    ("error_type", "kind", "retryable"),
    [
        ("overloaded_error", FaultKind.OVERLOADED, True),
        ("api_error", FaultKind.SERVER_ERROR, True),
        ("rate_limit_error", FaultKind.RATE_LIMITED, True),
        ("invalid_request_error", FaultKind.BAD_REQUEST, False),
        ("billing_error", FaultKind.QUOTA_EXHAUSTED, False),
    ],
)
async def test_error_event_mid_stream(error_type: str, kind: FaultKind, retryable: bool) -> None:
    events, error, server = await run(
        sse_reply(
            MESSAGE_START,
            block_start(0, {"type": "text", "text": ""}),
            text(0, "Hel"),
            event("error", error={"type": error_type, "message": "Overloaded"}),
        )
    )
    assert events == [*OPENING, TextDelta("Hel")]
    assert_fault(error, kind, retryable=retryable)
    assert error is not None
    assert error.provider_code == error_type
    assert len(server.requests) == 1


@pytest.mark.anyio
@pytest.mark.requirement("PROV-TOOL-001")
async def test_malformed_tool_input_never_completes() -> None:
    events, error, _ = await run(
        sse_reply(
            MESSAGE_START,
            tool_use(0, "toolu_A", "read_file"),
            json_delta(0, '{"path": '),
            block_stop(0),
            message_delta("tool_use"),
            MESSAGE_STOP,
        )
    )
    assert not any(isinstance(e, ToolCallComplete) for e in events)
    assert_fault(error, FaultKind.MALFORMED_TOOL_CALL)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-EOF-001")
async def test_clean_eof_without_message_stop() -> None:
    events, error, _ = await run(
        sse_reply(
            MESSAGE_START,
            block_start(0, {"type": "text", "text": ""}),
            text(0, "Hi"),
            block_stop(0),
            message_delta("end_turn"),
        )
    )
    assert events == [*OPENING, TextDelta("Hi"), FINAL_USAGE]
    assert_fault(error, FaultKind.INCOMPLETE_STREAM)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-SSE-001")
async def test_message_stop_without_trailing_blank_line() -> None:
    events, error, _ = await run(
        sse_reply(MESSAGE_START, message_delta("end_turn"), MESSAGE_STOP.rstrip("\n"))
    )
    assert error is None
    assert events[-1] == Finish(FinishReason.STOP, "end_turn")


def _word_split(cut: Fin | Rst, release: anyio.Event) -> Reply:
    return sse_reply(
        MESSAGE_START,
        block_start(0, {"type": "text", "text": ""}),
        text(0, "Hel"),
        WaitFor(release),
        text(0, "lo wor")[:40],
        then=cut,
    )


def _after_tool_call(cut: Fin | Rst, release: anyio.Event) -> Reply:
    return sse_reply(
        MESSAGE_START,
        tool_use(0, "toolu_A", "read_file"),
        json_delta(0, '{"pa'),
        WaitFor(release),
        then=cut,
    )


def _before_finish(cut: Fin | Rst, release: anyio.Event) -> Reply:
    return sse_reply(
        MESSAGE_START,
        block_start(0, {"type": "text", "text": ""}),
        text(0, "Hello"),
        block_stop(0),
        WaitFor(release),
        then=cut,
    )


@pytest.mark.anyio
@pytest.mark.requirement("PROV-TRANSPORT-001")
@pytest.mark.requirement("PROV-TOOL-002")
@pytest.mark.parametrize("cut", [Fin(), Rst()], ids=["fin", "rst"])
@pytest.mark.parametrize(
    ("script", "expected"),
    [
        (_word_split, [*OPENING, TextDelta("Hel")]),
        (
            _after_tool_call,
            [
                *OPENING,
                ToolCallStart("toolu_A", "read_file", 0),
                ToolCallDelta("toolu_A", 0, '{"pa'),
            ],
        ),
        (_before_finish, [*OPENING, TextDelta("Hello")]),
    ],
    ids=["inside-word", "after-tool-call", "before-finish"],
)
async def test_transport_cut(cut: Fin | Rst, script: Any, expected: list[StreamEvent]) -> None:
    release = anyio.Event()
    await assert_cut_after(run, script(cut, release), release, expected, ToolCallComplete)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-TIMEOUT-001")
async def test_stall_inside_a_tool_call_trips_the_idle_timeout() -> None:
    release = anyio.Event()
    try:
        events, error, _ = await run(
            sse_reply(
                MESSAGE_START,
                tool_use(0, "toolu_A", "read_file"),
                json_delta(0, "{"),
                WaitFor(release),
            ),
            idle_timeout=0.2,
        )
    finally:
        release.set()
    assert not any(isinstance(e, ToolCallComplete) for e in events)
    assert_fault(error, FaultKind.IDLE_TIMEOUT)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-TIMEOUT-002")
async def test_pings_do_not_satisfy_the_first_token_timeout() -> None:
    release = anyio.Event()
    try:
        events, error, _ = await run(
            sse_reply(MESSAGE_START, PING, PING, WaitFor(release)),
            idle_timeout=5.0,
            first_token_timeout=0.2,
        )
    finally:
        release.set()
    assert events == [*OPENING]
    assert_fault(error, FaultKind.FIRST_TOKEN_TIMEOUT)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-HISTORY-001")
async def test_tool_loop_history_keeps_thinking_signatures() -> None:
    request = ModelRequest(
        model="claude-other",
        system="be brief",
        messages=[
            UserTurn(("read a",)),
            AssistantTurn(
                "Reading.",
                thoughts=(
                    Thought("plan", signature="sig1"),
                    Thought("", redacted_data="opaque"),
                    Thought("unsigned"),
                ),
                tool_calls=(ToolCall("toolu_A", "read_file", {"path": "a"}),),
            ),
            ToolResults((ToolResult("toolu_A", "read_file", "denied", is_error=True),)),
            UserTurn(("try again",)),
        ],
        tools=[ToolSpec("read_file", "Read a file", {"type": "object"})],
    )
    _, error, server = await run(
        sse_reply(MESSAGE_START, message_delta("end_turn"), MESSAGE_STOP),
        request=request,
        api_key="sk-ant-SECRET",
        thinking_budget=1024,
    )
    assert error is None
    sent = server.requests[0]
    assert sent.headers["x-api-key"] == "sk-ant-SECRET"
    assert sent.json() == {
        "model": "claude-other",
        "max_tokens": 8192 + 1024,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "read a"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "plan", "signature": "sig1"},
                    {"type": "redacted_thinking", "data": "opaque"},
                    {"type": "text", "text": "Reading."},
                    {
                        "type": "tool_use",
                        "id": "toolu_A",
                        "name": "read_file",
                        "input": {"path": "a"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_A",
                        "content": "denied",
                        "is_error": True,
                    },
                    {"type": "text", "text": "try again"},
                ],
            },
        ],
        "stream": True,
        "system": "be brief",
        "tools": [
            {"name": "read_file", "description": "Read a file", "input_schema": {"type": "object"}}
        ],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }
