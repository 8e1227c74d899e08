"""OpenAIProvider against a real loopback HTTP server: streams, quirks, faults, statuses."""

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
    Send,
    WaitFor,
    assert_cut_after,
    assert_fault,
    drain,
    json_reply,
    sse,
    sse_reply,
    stream_at,
)

from acp_bridge._json import JsonValue
from acp_bridge.providers import (
    AssistantTurn,
    FaultKind,
    Finish,
    FinishReason,
    ModelRequest,
    ModelStreamError,
    Phase,
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
from acp_bridge.providers.http import HttpProviderOptions, OpenAIProvider

REQUEST = ModelRequest(model="", messages=[UserTurn(("hi",))])
START = StreamStart("openai", "gpt-test", "chatcmpl-1")


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> str:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return sse({"id": "chatcmpl-1", "model": "gpt-test", "choices": choices, **extra})


def tool(
    index: int | None,
    fragment: str = "",
    *,
    id: str | None = None,
    name: str | None = None,
    arguments: Any = None,
) -> str:
    call: dict[str, Any] = {"function": {"arguments": fragment if arguments is None else arguments}}
    if index is not None:
        call["index"] = index
    if id is not None:
        call["id"] = id
        call["type"] = "function"
    if name is not None:
        call["function"]["name"] = name
    return chunk({"tool_calls": [call]})


ROLE = chunk({"role": "assistant", "content": ""})
DONE = sse("[DONE]")
USAGE = chunk(
    None,
    usage={
        "prompt_tokens": 60,
        "completion_tokens": 15,
        "total_tokens": 75,
        "prompt_tokens_details": {"cached_tokens": 4},
        "completion_tokens_details": {"reasoning_tokens": 2},
    },
)


async def run(
    *replies: Reply,
    request: ModelRequest = REQUEST,
    on_event: Callable[[StreamEvent], None] | None = None,
    **options: Any,
) -> tuple[list[StreamEvent], ModelStreamError | None, LoopbackServer]:
    settings: dict[str, Any] = {"model": "gpt-test", **options}
    return await stream_at(OpenAIProvider, "/v1", replies, request, on_event=on_event, **settings)


@pytest.mark.anyio
async def test_text_stream() -> None:
    events, error, server = await run(
        sse_reply(
            ROLE, chunk({"content": "Hel"}), chunk({"content": "lo"}), chunk({}, "stop"), DONE
        )
    )
    assert error is None
    assert events == [START, TextDelta("Hel"), TextDelta("lo"), Finish(FinishReason.STOP, "stop")]
    assert len(server.requests) == 1
    sent = server.requests[0]
    assert (sent.method, sent.path) == ("POST", "/v1/chat/completions")
    assert "authorization" not in sent.headers  # a local server needs no key
    assert sent.json() == {
        "model": "gpt-test",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }


@pytest.mark.anyio
@pytest.mark.requirement("PROV-TOOL-001")
async def test_tool_call_fragments_and_include_usage() -> None:
    events, error, _ = await run(
        sse_reply(
            chunk(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_A",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": ""},
                        }
                    ],
                }
            ),
            tool(0, '{"'),
            tool(0, "path"),
            tool(0, '":"'),
            tool(0, "README.md"),
            tool(0, '"}'),
            chunk({}, "tool_calls"),
            USAGE,
            DONE,
        )
    )
    assert error is None
    assert events == [
        START,
        ToolCallStart("call_A", "read_file", 0),
        ToolCallDelta("call_A", 0, '{"'),
        ToolCallDelta("call_A", 0, "path"),
        ToolCallDelta("call_A", 0, '":"'),
        ToolCallDelta("call_A", 0, "README.md"),
        ToolCallDelta("call_A", 0, '"}'),
        ToolCallComplete("call_A", "read_file", {"path": "README.md"}, '{"path":"README.md"}'),
        Usage(input_tokens=60, output_tokens=15, cached_input_tokens=4, reasoning_tokens=2),
        Finish(FinishReason.TOOL_CALLS, "tool_calls"),
    ]


@pytest.mark.anyio
async def test_parallel_tool_calls_interleaved_by_index() -> None:
    events, error, _ = await run(
        sse_reply(
            ROLE,
            tool(0, id="call_A", name="read_file"),
            tool(1, id="call_B", name="list_directory"),
            tool(0, '{"path":'),
            tool(1, '{"path":"."}'),
            tool(0, '"a.txt"}'),
            chunk({}, "tool_calls"),
            DONE,
        )
    )
    assert error is None
    assert [e for e in events if isinstance(e, ToolCallStart | ToolCallComplete)] == [
        ToolCallStart("call_A", "read_file", 0),
        ToolCallStart("call_B", "list_directory", 1),
        ToolCallComplete("call_A", "read_file", {"path": "a.txt"}, '{"path":"a.txt"}'),
        ToolCallComplete("call_B", "list_directory", {"path": "."}, '{"path":"."}'),
    ]


@pytest.mark.anyio
async def test_ollama_whole_calls_reusing_index_zero() -> None:
    # Ollama: each call whole in one chunk, index 0 for every call, dict arguments, "stop".
    events, error, _ = await run(
        sse_reply(
            ROLE,
            tool(0, id="call_1", name="read_file", arguments={"path": "a"}),
            tool(0, id="call_2", name="read_file", arguments={"path": "b"}),
            chunk({}, "stop"),
            DONE,
        )
    )
    assert error is None
    assert events == [
        START,
        ToolCallStart("call_1", "read_file", 0),
        ToolCallDelta("call_1", 0, '{"path": "a"}'),
        ToolCallStart("call_2", "read_file", 1),
        ToolCallDelta("call_2", 1, '{"path": "b"}'),
        ToolCallComplete("call_1", "read_file", {"path": "a"}, '{"path": "a"}'),
        ToolCallComplete("call_2", "read_file", {"path": "b"}, '{"path": "b"}'),
        Finish(FinishReason.TOOL_CALLS, "stop"),
    ]


@pytest.mark.anyio
async def test_fresh_id_on_every_fragment_and_missing_ids() -> None:
    # LM Studio: a new id on each fragment of the same call; old Ollama: no index, no id.
    events, error, _ = await run(
        sse_reply(
            ROLE,
            tool(0, '{"pa', id="x1", name="read_file"),
            tool(0, 'th":"a"}', id="x2"),
            tool(None, "{}", name="list_directory"),
            chunk({}, "tool_calls"),
            DONE,
        )
    )
    assert error is None
    completes = [e for e in events if isinstance(e, ToolCallComplete)]
    assert [(c.call_id, c.name, c.arguments) for c in completes] == [
        ("x1", "read_file", {"path": "a"}),
        ("call_chatcmpl-1_1", "list_directory", {}),
    ]


@pytest.mark.anyio
async def test_reasoning_fields_become_thoughts() -> None:
    events, error, _ = await run(
        sse_reply(
            ROLE,
            chunk({"reasoning_content": "think "}),
            chunk({"reasoning": "more"}),
            chunk(
                {"reasoning_details": [{"type": "reasoning.text", "text": "x", "signature": "s"}]}
            ),
            # OpenRouter repeats the text in `reasoning`; the details keep the signature.
            chunk(
                {
                    "reasoning": "y",
                    "reasoning_details": [
                        {"type": "reasoning.text", "text": "y"},
                        {"type": "reasoning.encrypted", "data": "opaque", "signature": "s2"},
                    ],
                }
            ),
            chunk({"content": "answer"}),
            chunk({}, "stop"),
            DONE,
        )
    )
    assert error is None
    assert events[1:5] == [
        ThoughtDelta("think "),
        ThoughtDelta("more"),
        ThoughtDelta("x", signature="s"),
        ThoughtDelta("y", signature="s2", redacted_data="opaque"),
    ]
    assert events[5] == TextDelta("answer")


@pytest.mark.anyio
@pytest.mark.requirement("PROV-FILTER-001")
async def test_content_filter_is_a_finish() -> None:
    events, error, _ = await run(
        sse_reply(ROLE, chunk({"content": "partial"}), chunk({}, "content_filter"), DONE)
    )
    assert error is None
    assert events[-1] == Finish(FinishReason.CONTENT_FILTER, "content_filter")


@pytest.mark.anyio
@pytest.mark.requirement("PROV-SSE-001")
async def test_done_without_trailing_blank_line() -> None:
    events, error, _ = await run(
        sse_reply(ROLE, chunk({"content": "ok"}), chunk({}, "stop"), "data: [DONE]")
    )
    assert error is None
    assert events[-1] == Finish(FinishReason.STOP, "stop")


@pytest.mark.anyio
async def test_eof_after_finish_reason_without_done_is_a_finish() -> None:
    events, error, _ = await run(sse_reply(ROLE, chunk({"content": "ok"}), chunk({}, "length")))
    assert error is None
    assert events[-1] == Finish(FinishReason.LENGTH, "length")


@pytest.mark.anyio
@pytest.mark.requirement("PROV-EOF-001")
async def test_clean_eof_without_terminal_marker() -> None:
    events, error, server = await run(sse_reply(ROLE, chunk({"content": "Hel"})))
    assert events == [START, TextDelta("Hel")]
    assert_fault(error, FaultKind.INCOMPLETE_STREAM)
    assert len(server.requests) == 1


@pytest.mark.anyio
@pytest.mark.requirement("PROV-EOF-001")
async def test_close_delimited_body_cut_inside_an_event() -> None:
    reply = Reply(
        steps=(Send(ROLE), Send('data: {"id":"chatcmpl-1","choi'), Fin()), framing="close"
    )
    events, error, _ = await run(reply)
    assert events == [START]
    assert_fault(error, FaultKind.INCOMPLETE_STREAM)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-TOOL-001")
async def test_malformed_tool_arguments_never_complete() -> None:
    events, error, _ = await run(
        sse_reply(
            ROLE,
            tool(0, '{"path": "a"', id="call_A", name="read_file"),
            chunk({}, "tool_calls"),
            DONE,
        )
    )
    assert not any(isinstance(e, ToolCallComplete) for e in events)
    assert_fault(error, FaultKind.MALFORMED_TOOL_CALL)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-INBAND-001")
@pytest.mark.requirement("PROV-SSE-002")
@pytest.mark.parametrize(
    ("frame", "kind", "retryable", "status", "code"),
    [
        (
            sse({"error": {"message": "The server had an error", "type": "server_error"}}),
            FaultKind.SERVER_ERROR,
            True,
            None,
            "server_error",
        ),
        # OpenRouter: a chunk with a top-level error and finish_reason "error".
        (
            sse(
                {
                    "id": "c",
                    "object": "chat.completion.chunk",
                    "provider": "openai",
                    "error": {
                        "code": "server_error",
                        "message": "Provider disconnected unexpectedly",
                    },
                    "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
                }
            ),
            FaultKind.SERVER_ERROR,
            True,
            None,
            "server_error",
        ),
        # vLLM: a bare error object.
        (
            sse({"object": "error", "message": "bad", "type": "BadRequestError", "code": 400}),
            FaultKind.BAD_REQUEST,
            False,
            400,
            "BadRequestError",
        ),
        # old llama.cpp: the non-standard `error:` field, followed by a normal [DONE].
        (
            'error: {"code":500,"message":"slot died","type":"server_error"}\n\n' + DONE,
            FaultKind.SERVER_ERROR,
            True,
            500,
            "server_error",
        ),
        # a finish_reason "error" without any error object.
        (chunk({}, "error"), FaultKind.SERVER_ERROR, True, None, "error"),
    ],
)
async def test_in_band_errors(
    frame: str, kind: FaultKind, retryable: bool, status: int | None, code: str
) -> None:
    events, error, server = await run(sse_reply(ROLE, chunk({"content": "Hel"}), frame, DONE))
    assert events == [START, TextDelta("Hel")]
    assert_fault(error, kind, retryable=retryable, status=status)
    assert error is not None
    assert error.provider_code == code
    assert len(server.requests) == 1


# Transport faults at the three places, FIN and RST, with the consumer having read up to there.


def _word_split(cut: Fin | Rst, release: anyio.Event) -> Reply:
    return sse_reply(
        ROLE,
        chunk({"content": "Hel"}),
        WaitFor(release),
        chunk({"content": "lo wor"})[:25],
        then=cut,
    )


def _after_tool_call(cut: Fin | Rst, release: anyio.Event) -> Reply:
    return sse_reply(
        ROLE, tool(0, id="call_A", name="read_file"), tool(0, '{"pa'), WaitFor(release), then=cut
    )


def _before_finish(cut: Fin | Rst, release: anyio.Event) -> Reply:
    return sse_reply(ROLE, chunk({"content": "Hello"}), WaitFor(release), then=cut)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-TRANSPORT-001")
@pytest.mark.requirement("PROV-TOOL-002")
@pytest.mark.parametrize("cut", [Fin(), Rst()], ids=["fin", "rst"])
@pytest.mark.parametrize(
    ("script", "expected"),
    [
        (_word_split, [START, TextDelta("Hel")]),
        (
            _after_tool_call,
            [START, ToolCallStart("call_A", "read_file", 0), ToolCallDelta("call_A", 0, '{"pa')],
        ),
        (_before_finish, [START, TextDelta("Hello")]),
    ],
    ids=["inside-word", "after-tool-call", "before-finish"],
)
async def test_transport_cut(cut: Fin | Rst, script: Any, expected: list[StreamEvent]) -> None:
    release = anyio.Event()
    await assert_cut_after(run, script(cut, release), release, expected, ToolCallComplete)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-TIMEOUT-001")
async def test_stall_trips_the_idle_timeout() -> None:
    release = anyio.Event()
    try:
        events, error, _ = await run(
            sse_reply(ROLE, chunk({"content": "Hel"}), WaitFor(release)),
            idle_timeout=0.2,
        )
    finally:
        release.set()
    assert events == [START, TextDelta("Hel")]
    assert_fault(error, FaultKind.IDLE_TIMEOUT)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-TIMEOUT-002")
async def test_first_token_timeout_counts_only_semantic_events() -> None:
    release = anyio.Event()
    try:
        events, error, _ = await run(
            sse_reply(ROLE, ": keep-alive\n\n", WaitFor(release)),
            idle_timeout=5.0,
            first_token_timeout=0.2,
        )
    finally:
        release.set()
    assert events == [START]
    assert_fault(error, FaultKind.FIRST_TOKEN_TIMEOUT)


@pytest.mark.anyio
async def test_connection_refused() -> None:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    await listener.aclose()
    async with OpenAIProvider(
        HttpProviderOptions("gpt-test", base_url=f"http://127.0.0.1:{port}/v1")
    ) as provider:
        events, error = await drain(provider.stream(REQUEST))
    assert events == []
    assert_fault(error, FaultKind.CONNECTION_FAILED, phase=Phase.CONNECT)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-SECRET-001")
async def test_api_key_sent_but_never_traced_or_echoed() -> None:
    key = "sk-test-SECRET-123"
    records: list[dict[str, JsonValue]] = []
    _events, error, server = await run(
        json_reply(
            401,
            {
                "error": {
                    "message": f"Incorrect API key provided: {key}",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            },
        ),
        api_key=key,
        trace=records.append,
    )
    assert server.requests[0].headers["authorization"] == f"Bearer {key}"
    assert_fault(error, FaultKind.AUTH_FAILED, phase=Phase.CONNECT, retryable=False, status=401)
    assert error is not None
    assert key not in str(error)
    assert key not in repr(error)
    assert key not in repr(records)
    assert [r["type"] for r in records] == [
        "provider_request",
        "provider_response",
        "provider_error",
    ]
    assert all(r["attempt"] == 1 for r in records)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-HISTORY-001")
async def test_tool_loop_history_is_rendered_with_call_ids() -> None:
    request = ModelRequest(
        model="gpt-other",
        system="be brief",
        attempt=2,
        messages=[
            UserTurn(("read it", "please")),
            AssistantTurn(
                "",
                thoughts=(Thought("hmm"),),
                tool_calls=(
                    ToolCall("call_A", "read_file", {"path": "a"}),
                    ToolCall("call_B", "read_file", {"path": "b"}),
                ),
            ),
            ToolResults(
                (
                    ToolResult("call_A", "read_file", "A"),
                    ToolResult("call_B", "read_file", "no such file", is_error=True),
                )
            ),
            AssistantTurn("done"),
            UserTurn(("thanks",)),
        ],
        tools=[
            ToolSpec(
                "read_file",
                "Read a file",
                {"type": "object", "properties": {"path": {"type": "string"}}},
            )
        ],
    )
    records: list[dict[str, JsonValue]] = []
    _, error, server = await run(
        sse_reply(ROLE, chunk({}, "stop"), DONE),
        request=request,
        max_tokens=512,
        trace=records.append,
    )
    assert error is None
    assert server.requests[0].json() == {
        "model": "gpt-other",
        "messages": [
            {"role": "system", "content": "be brief"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "read it"},
                    {"type": "text", "text": "please"},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_A",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "a"}'},
                    },
                    {
                        "id": "call_B",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "b"}'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_A", "content": "A"},
            {"role": "tool", "tool_call_id": "call_B", "content": "no such file"},
            {"role": "assistant", "content": "done"},
            {"role": "user", "content": "thanks"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "read_file",
                    "description": "Read a file",
                    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                },
            }
        ],
        "max_tokens": 512,
    }
    assert {r["attempt"] for r in records} == {2}
    assert [r["type"] for r in records][:3] == [
        "provider_request",
        "provider_response",
        "provider_event",
    ]
