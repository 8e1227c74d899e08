"""The shared HTTP transport: cancellation, phases before the response, tracing, headers."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.abc
import pytest
from loopback_http import (
    AwaitHangup,
    Fin,
    LoopbackServer,
    Reply,
    Send,
    WaitFor,
    drain,
    sse,
    sse_reply,
)

from acp_bridge._json import JsonValue
from acp_bridge.providers import (
    FaultKind,
    Finish,
    FinishReason,
    ModelRequest,
    ModelStreamError,
    Phase,
    StreamEvent,
    TextDelta,
    UserTurn,
)
from acp_bridge.providers.http import HttpProviderOptions, OpenAIProvider

REQUEST = ModelRequest(model="", messages=[UserTurn(("hi",))], attempt=3)


def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    return sse(
        {
            "id": "c",
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    )


def provider(base_url: str, **options: Any) -> OpenAIProvider:
    return OpenAIProvider(HttpProviderOptions("m", base_url=f"{base_url}/v1", **options))


@pytest.mark.anyio
async def test_cancelling_the_consumer_closes_the_connection() -> None:
    hung_up = anyio.Event()
    async with (
        LoopbackServer([sse_reply(chunk({"content": "Hel"}), AwaitHangup(hung_up))]) as server,
        provider(server.base_url) as model,
    ):
        seen: list[StreamEvent] = []
        with anyio.CancelScope() as scope:
            async for event in model.stream(REQUEST):
                seen.append(event)
                if isinstance(event, TextDelta):
                    scope.cancel()
                    await anyio.sleep_forever()  # cancelled at once
        with anyio.fail_after(5):
            await hung_up.wait()
    assert seen[-1] == TextDelta("Hel")
    assert scope.cancelled_caught


@pytest.mark.anyio
async def test_closing_the_stream_early_closes_the_connection() -> None:
    hung_up = anyio.Event()
    async with (
        LoopbackServer([sse_reply(chunk({"content": "Hel"}), AwaitHangup(hung_up))]) as server,
        provider(server.base_url) as model,
    ):
        stream = model.stream(REQUEST)
        with anyio.fail_after(5):
            await anext(stream)
            await anext(stream)
            await stream.aclose()  # type: ignore[attr-defined]
            await hung_up.wait()
    assert len(server.requests) == 1


async def _silent_server(
    close: bool, *, task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED
) -> None:
    """Accepts connections, reads nothing back: answers never, or hangs up at once."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)

    async def handle(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            if not close:
                await anyio.sleep_forever()

    async with listener:
        task_status.started(listener.extra(anyio.abc.SocketAttribute.local_port))
        await listener.serve(handle)


@pytest.mark.anyio
@pytest.mark.requirement("TIMEOUT-001")
@pytest.mark.parametrize(
    ("close", "first_token", "kind"),
    [
        # Until the first token the first-token timeout bounds the wait for the headers too.
        (False, 0.5, FaultKind.FIRST_TOKEN_TIMEOUT),
        (False, None, FaultKind.IDLE_TIMEOUT),
        (True, 0.5, FaultKind.CONNECTION_FAILED),
    ],
    ids=["no-answer", "no-answer-no-first-token-timeout", "hang-up"],
)
async def test_failures_before_the_response_are_connect_phase(
    close: bool, first_token: float | None, kind: FaultKind
) -> None:
    async with anyio.create_task_group() as group:
        port = await group.start(_silent_server, close)
        url = f"http://127.0.0.1:{port}"
        async with provider(url, idle_timeout=0.2, first_token_timeout=first_token) as model:
            events, error = await drain(model.stream(REQUEST))
        group.cancel_scope.cancel()
    assert events == []
    assert error is not None
    assert (error.kind, error.phase, error.retryable) == (kind, Phase.CONNECT, True)


@pytest.mark.anyio
async def test_first_token_timeout_with_a_head_but_no_body() -> None:
    release = anyio.Event()
    async with LoopbackServer([Reply(steps=(WaitFor(release),))]) as server:
        # The timeout runs from the request, so it must outlast the loopback head by far,
        # also on a loaded machine (0.2 s once expired before the head: phase "connect").
        async with provider(server.base_url, idle_timeout=30.0, first_token_timeout=2.0) as model:
            events, error = await drain(model.stream(REQUEST))
        release.set()
    assert events == []
    assert error is not None
    assert (error.kind, error.phase) == (FaultKind.FIRST_TOKEN_TIMEOUT, Phase.STREAM)


@pytest.mark.anyio
@pytest.mark.requirement("PROV-SECRET-001")
async def test_trace_records_every_request_and_item_with_the_attempt() -> None:
    records: list[dict[str, JsonValue]] = []
    reply = sse_reply(": hello\n", chunk({"content": "Hi"}), chunk({}, "stop"), sse("[DONE]"))
    async with (
        LoopbackServer([reply]) as server,
        provider(
            server.base_url,
            api_key="sk-SECRET",
            trace=records.append,
            extra_headers={"x-title": "acp-bridge"},
        ) as model,
    ):
        _, error = await drain(model.stream(REQUEST))
    assert error is None
    assert server.requests[0].headers["x-title"] == "acp-bridge"
    assert [record["type"] for record in records] == [
        "provider_request",
        "provider_response",
        "provider_comment",
        "provider_event",
        "provider_event",
        "provider_event",
    ]
    assert {record["attempt"] for record in records} == {3}
    assert {record["provider"] for record in records} == {"openai"}
    request = records[0]
    assert isinstance(request["headers"], dict)
    assert request["headers"]["authorization"] == "[redacted]"
    assert request["url"] == f"{server.base_url}/v1/chat/completions"
    assert "sk-SECRET" not in repr(records)
    assert records[-1]["data"] == "[DONE]"


@pytest.mark.anyio
async def test_a_failing_trace_hook_does_not_break_the_stream() -> None:
    def broken(record: dict[str, JsonValue]) -> None:
        raise OSError("disk full")

    reply = sse_reply(chunk({"content": "Hi"}), chunk({}, "stop"), sse("[DONE]"))
    async with (
        LoopbackServer([reply]) as server,
        provider(server.base_url, trace=broken) as model,
    ):
        events, error = await drain(model.stream(REQUEST))
    assert error is None
    assert events[1] == TextDelta("Hi")


@pytest.mark.anyio
async def test_one_client_serves_sequential_and_concurrent_streams() -> None:
    body = (chunk({"content": "Hi"}), chunk({}, "stop"), sse("[DONE]"))
    results: list[tuple[list[StreamEvent], ModelStreamError | None]] = []
    async with (
        LoopbackServer([sse_reply(*body) for _ in range(3)]) as server,
        provider(server.base_url) as model,
    ):

        async def one() -> None:
            results.append(await drain(model.stream(REQUEST)))

        await one()
        async with anyio.create_task_group() as group:
            group.start_soon(one)
            group.start_soon(one)
    assert [error for _, error in results] == [None, None, None]
    assert len(server.requests) == 3


@pytest.mark.anyio
async def test_a_server_stalling_after_done_does_not_hold_the_attempt() -> None:
    # After the terminal marker the rest of the body is drained for connection reuse, but
    # only briefly: a server that stalls there cannot turn a complete answer into a timeout.
    release = anyio.Event()
    reply = sse_reply(chunk({"content": "Hi"}), chunk({}, "stop"), sse("[DONE]"), WaitFor(release))
    async with (
        LoopbackServer([reply]) as server,
        provider(server.base_url, idle_timeout=5) as model,
    ):
        events, error = await drain(model.stream(REQUEST))
        release.set()
    assert error is None
    assert events[-1] == Finish(FinishReason.STOP, "stop")


@pytest.mark.anyio
@pytest.mark.requirement("THRU-005")
async def test_a_body_cut_mid_stream_names_the_server_it_came_from() -> None:
    # The body is read from the response's own byte stream (not `aiter_raw`), so the
    # transport attaches the request to httpx's error itself: the message still says
    # which server broke the stream.
    steps = (Send(chunk({"role": "assistant", "content": ""})), Send(chunk({"content": "a"})))
    async with (
        LoopbackServer([Reply(steps=(*steps, Fin()))]) as server,
        provider(server.base_url) as model,
    ):
        events, error = await drain(model.stream(REQUEST))
    assert TextDelta("a") in events
    assert error is not None
    assert (error.kind, error.phase) == (FaultKind.STREAM_INTERRUPTED, Phase.STREAM)
    host = server.base_url.removeprefix("http://")
    assert f"openai: the stream from {host} broke" in error.message
