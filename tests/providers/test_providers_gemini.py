"""GeminiProvider against a real loopback HTTP server: parts, signatures, raw errors, faults."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from loopback_http import (
    End,
    Fin,
    LoopbackServer,
    Reply,
    Rst,
    Send,
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
    ToolCallStart,
    ToolResult,
    ToolResults,
    ToolSpec,
    Usage,
    UserTurn,
)
from acp_bridge.providers.http import GeminiProvider

REQUEST = ModelRequest(model="", messages=[UserTurn(("hi",))])
START = StreamStart("gemini", "gemini-test-001", "resp-1")
USAGE = {
    "promptTokenCount": 9,
    "candidatesTokenCount": 10,
    "thoughtsTokenCount": 256,
    "cachedContentTokenCount": 3,
    "totalTokenCount": 275,
}


def response(*parts: dict[str, Any], finish: str | None = None, usage: bool = True) -> str:
    candidate: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    body: dict[str, Any] = {
        "candidates": [candidate],
        "modelVersion": "gemini-test-001",
        "responseId": "resp-1",
    }
    if usage:
        body["usageMetadata"] = USAGE
    return sse(body)


FINAL_USAGE = Usage(input_tokens=9, output_tokens=266, cached_input_tokens=3, reasoning_tokens=256)
RAW_503 = """{
  "error": {
    "code": 503,
    "message": "The model is overloaded. Please try again later.",
    "status": "UNAVAILABLE"
  }
}
"""


async def run(
    *replies: Reply,
    request: ModelRequest = REQUEST,
    on_event: Callable[[StreamEvent], None] | None = None,
    **options: Any,
) -> tuple[list[StreamEvent], ModelStreamError | None, LoopbackServer]:
    settings: dict[str, Any] = {"model": "gemini-test", **options}
    return await stream_at(
        GeminiProvider, "/v1beta", replies, request, on_event=on_event, **settings
    )


@pytest.mark.anyio
async def test_text_thoughts_and_trailing_signature() -> None:
    events, error, server = await run(
        sse_reply(
            response({"text": "Counting r", "thought": True}),
            response({"text": 'There are **3** "r"s in'}),
            response({"text": " strawberry."}),
            response({"text": "", "thoughtSignature": "Eo0H"}, finish="STOP"),
        )
    )
    assert error is None
    assert events == [
        START,
        ThoughtDelta("Counting r"),
        FINAL_USAGE,  # passed on with the first chunk that reports it (10.15)
        TextDelta('There are **3** "r"s in'),
        TextDelta(" strawberry."),
        ThoughtDelta("", signature="Eo0H"),
        Finish(FinishReason.STOP, "STOP"),
    ]
    sent = server.requests[0]
    assert (sent.method, sent.path) == (
        "POST",
        "/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
    )
    assert "x-goog-api-key" not in sent.headers


@pytest.mark.anyio
async def test_function_calls_arrive_whole_with_signatures_and_synthesized_ids() -> None:
    events, error, _ = await run(
        sse_reply(
            response(
                {
                    "functionCall": {"name": "weather", "args": {"location": "SF"}},
                    "thoughtSignature": "EpEg",
                },
                {"functionCall": {"name": "time", "args": {}, "id": "fc-given"}},
            ),
            response({"text": ""}, finish="STOP"),
        )
    )
    assert error is None
    assert events == [
        START,
        ToolCallStart("call_resp-1_0", "weather", 0),
        ToolCallComplete(
            "call_resp-1_0",
            "weather",
            {"location": "SF"},
            '{"location": "SF"}',
            {"thought_signature": "EpEg", "synthesized_id": True},
        ),
        ToolCallStart("fc-given", "time", 1),
        ToolCallComplete("fc-given", "time", {}, "{}"),
        FINAL_USAGE,
        Finish(FinishReason.TOOL_CALLS, "STOP"),
    ]


@pytest.mark.anyio
@pytest.mark.requirement("PROV-FILTER-001")
@pytest.mark.parametrize("reason", ["SAFETY", "RECITATION", "PROHIBITED_CONTENT"])
async def test_safety_finishes_are_content_filter(reason: str) -> None:
    events, error, _ = await run(sse_reply(response({"text": "par"}), response(finish=reason)))
    assert error is None
    assert events[-1] == Finish(FinishReason.CONTENT_FILTER, reason)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-FILTER-001")
async def test_blocked_prompt_is_content_filter() -> None:
    blocked = sse(
        {
            "promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
            "usageMetadata": {"promptTokenCount": 5},
            "responseId": "resp-1",
            "modelVersion": "gemini-test-001",
        }
    )
    events, error, _ = await run(sse_reply(blocked))
    assert error is None
    assert events == [
        START,
        Usage(input_tokens=5),
        Finish(FinishReason.CONTENT_FILTER, "PROHIBITED_CONTENT"),
    ]


@pytest.mark.anyio
@pytest.mark.requirement("PROV-TOOL-001")
@pytest.mark.parametrize("reason", ["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL"])
async def test_malformed_function_call_finish(reason: str) -> None:
    events, error, _ = await run(sse_reply(response({"text": "Let me"}), response(finish=reason)))
    assert events == [START, TextDelta("Let me"), FINAL_USAGE]
    assert_fault(error, FaultKind.MALFORMED_TOOL_CALL)
    assert error is not None
    assert error.provider_code == reason


@pytest.mark.anyio
@pytest.mark.requirement("PROV-INBAND-001")
@pytest.mark.requirement("PROV-SSE-003")
async def test_raw_json_error_appended_after_the_last_chunk() -> None:
    # vercel/ai #5217: a STOP chunk, then a pretty-printed error without SSE framing.
    events, error, server = await run(
        sse_reply(response({"text": "Hi"}), response({"text": ""}, finish="STOP"), RAW_503)
    )
    assert events == [START, TextDelta("Hi"), FINAL_USAGE]
    assert_fault(error, FaultKind.OVERLOADED, status=503)
    assert error is not None
    assert error.provider_code == "UNAVAILABLE"
    assert len(server.requests) == 1


@pytest.mark.anyio
@pytest.mark.requirement("PROV-INBAND-001")
async def test_data_framed_error_mid_stream() -> None:
    events, error, _ = await run(
        sse_reply(
            response({"text": "Hi"}),
            sse({"error": {"code": 500, "message": "Internal", "status": "INTERNAL"}}),
        )
    )
    assert events == [START, TextDelta("Hi"), FINAL_USAGE]
    assert_fault(error, FaultKind.SERVER_ERROR, status=500)


@pytest.mark.anyio
async def test_raw_json_error_as_the_whole_200_body() -> None:
    events, error, _ = await run(sse_reply(RAW_503))
    assert events == []
    assert_fault(error, FaultKind.OVERLOADED, status=503)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-EOF-001")
async def test_clean_eof_without_finish_reason() -> None:
    events, error, _ = await run(sse_reply(response({"text": "Hel"})))
    assert events == [START, TextDelta("Hel"), FINAL_USAGE]
    assert_fault(error, FaultKind.INCOMPLETE_STREAM)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-SSE-001")
async def test_last_chunk_without_blank_line() -> None:
    events, error, _ = await run(sse_reply(response({"text": "ok"}, finish="STOP").rstrip("\n")))
    assert error is None
    assert events[-1] == Finish(FinishReason.STOP, "STOP")


def _word_split(cut: Fin | Rst, release: anyio.Event) -> Reply:
    return sse_reply(
        response({"text": "Hel"}), WaitFor(release), response({"text": "lo wor"})[:30], then=cut
    )


def _after_tool_call(cut: Fin | Rst, release: anyio.Event) -> Reply:
    return sse_reply(
        response({"functionCall": {"name": "read_file", "args": {"path": "a"}}}),
        WaitFor(release),
        then=cut,
    )


def _before_finish(cut: Fin | Rst, release: anyio.Event) -> Reply:
    return sse_reply(response({"text": "Hello"}), WaitFor(release), then=cut)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-TRANSPORT-001")
@pytest.mark.parametrize("cut", [Fin(), Rst()], ids=["fin", "rst"])
@pytest.mark.parametrize(
    ("script", "expected"),
    [
        (_word_split, [START, TextDelta("Hel"), FINAL_USAGE]),
        # Gemini sends calls whole: the call is complete, yet the attempt still fails.
        (
            _after_tool_call,
            [
                START,
                ToolCallStart("call_resp-1_0", "read_file", 0),
                ToolCallComplete(
                    "call_resp-1_0",
                    "read_file",
                    {"path": "a"},
                    '{"path": "a"}',
                    {"synthesized_id": True},
                ),
                FINAL_USAGE,
            ],
        ),
        (_before_finish, [START, TextDelta("Hello"), FINAL_USAGE]),
    ],
    ids=["inside-word", "after-tool-call", "before-finish"],
)
async def test_transport_cut(cut: Fin | Rst, script: Any, expected: list[StreamEvent]) -> None:
    release = anyio.Event()
    await assert_cut_after(run, script(cut, release), release, expected, Finish)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-TIMEOUT-001")
async def test_stall_trips_the_idle_timeout() -> None:
    release = anyio.Event()
    try:
        events, error, _ = await run(
            sse_reply(response({"text": "Hel"}), WaitFor(release)), idle_timeout=0.2
        )
    finally:
        release.set()
    assert events == [START, TextDelta("Hel"), FINAL_USAGE]
    assert_fault(error, FaultKind.IDLE_TIMEOUT)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-HISTORY-001")
async def test_tool_loop_history_keeps_thought_signatures() -> None:
    request = ModelRequest(
        model="models/gemini-other",
        system="be brief",
        messages=[
            UserTurn(("weather?",)),
            AssistantTurn(
                "Checking.",
                thoughts=(Thought("plan", signature="s-thought"), Thought("", signature="s-tail")),
                tool_calls=(
                    ToolCall(
                        "call_resp-1_0",
                        "weather",
                        {"location": "SF"},
                        {"thought_signature": "EpEg", "synthesized_id": True},
                    ),
                    ToolCall("fc-given", "time", {}),
                ),
            ),
            ToolResults(
                (
                    ToolResult("call_resp-1_0", "weather", "sunny"),
                    ToolResult("fc-given", "time", "no clock", is_error=True),
                )
            ),
        ],
        tools=[ToolSpec("weather", "Weather", {"type": "object", "additionalProperties": False})],
    )
    _, error, server = await run(
        sse_reply(response({"text": "ok"}, finish="STOP")),
        request=request,
        api_key="AIza-SECRET",
        max_tokens=100,
        thinking_budget=512,
    )
    assert error is None
    sent = server.requests[0]
    assert sent.path == "/v1beta/models/gemini-other:streamGenerateContent?alt=sse"
    assert sent.headers["x-goog-api-key"] == "AIza-SECRET"
    assert "AIza-SECRET" not in sent.path
    assert sent.json() == {
        "contents": [
            {"role": "user", "parts": [{"text": "weather?"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "plan", "thought": True, "thoughtSignature": "s-thought"},
                    {"text": "Checking."},
                    {"text": "", "thoughtSignature": "s-tail"},
                    {
                        "functionCall": {"name": "weather", "args": {"location": "SF"}},
                        "thoughtSignature": "EpEg",
                    },
                    {"functionCall": {"name": "time", "args": {}, "id": "fc-given"}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "weather", "response": {"output": "sunny"}}},
                    {
                        "functionResponse": {
                            "name": "time",
                            "response": {"error": "no clock"},
                            "id": "fc-given",
                        }
                    },
                ],
            },
        ],
        "systemInstruction": {"parts": [{"text": "be brief"}]},
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "weather",
                        "description": "Weather",
                        "parametersJsonSchema": {"type": "object", "additionalProperties": False},
                    }
                ]
            }
        ],
        "generationConfig": {
            "maxOutputTokens": 100,
            "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 512},
        },
    }


@pytest.mark.anyio
async def test_a_json_array_body_is_not_a_stream() -> None:
    # Without alt=sse Gemini streams a JSON array: say so instead of waiting for SSE.
    events, error, _ = await run(
        Reply(
            steps=(Send('[{"candidates": []}]'), End()),
            framing="close",
            headers=(("content-type", "application/json"),),
        )
    )
    assert events == []
    assert_fault(error, FaultKind.PROVIDER_ERROR, retryable=False)
