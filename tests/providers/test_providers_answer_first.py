"""Answer first: after the terminal marker the prompt is answered, then the body is drained.

A real loopback server sends the stream up to its terminal marker (OpenAI's `[DONE]`,
Anthropic's `message_stop`) and holds the chunked body's end behind a gate that the test opens
only once it has the `session/prompt` response (TAIL4-STREAM-001). Then the drain, which ran
in the connection's background group meanwhile, returns the connection to the pool and the
next prompt goes out on it; a body end that never comes is given up on after the drain's bound
(0.25 s) and the connection is closed, never reused. Gemini has no terminal marker before the
body's end (its last chunk may be followed by a raw JSON error), so it is not in these tests.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from bridge import running_bridge, scripted_config
from loopback_h1 import KeepAliveServer, chunked, sse_events

from acp_bridge.providers.http import AnthropicProvider, HttpProviderOptions, OpenAIProvider
from acp_bridge.providers.http._h1_pool import H1Pool, Origin
from acp_bridge.providers.http._h1_transport import H1Transport
from acp_bridge.providers.http._provider import HttpModelProvider

pytestmark = pytest.mark.anyio
BOUND = 30  # every wait in these tests


def _anthropic_events(*texts: str) -> list[bytes]:
    def event(kind: str, **fields: Any) -> bytes:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **fields})}\n\n".encode()

    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": []}
    return [
        event("message_start", message={**message, "usage": {"input_tokens": 3}}),
        event("content_block_start", index=0, content_block={"type": "text", "text": ""}),
        *(
            event("content_block_delta", index=0, delta={"type": "text_delta", "text": t})
            for t in texts
        ),
        event("content_block_stop", index=0),
        event("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 2}),
        event("message_stop"),
    ]


_KINDS: dict[str, tuple[Callable[..., list[bytes]], Callable[[str], HttpModelProvider]]] = {
    "openai": (sse_events, lambda url: OpenAIProvider(HttpProviderOptions("m", url + "/v1"))),
    "anthropic": (
        _anthropic_events,
        lambda url: AnthropicProvider(HttpProviderOptions("m", url, api_key="k")),
    ),
}


def _until_the_terminator(events: list[bytes]) -> bytes:
    """The response up to its terminal marker, each event a chunk; no last chunk yet."""
    return chunked(*events)[: -len(b"0\r\n\r\n")]


def _pool(provider: HttpModelProvider) -> H1Pool:
    transport = provider._transport._http()._transport  # the client's transport
    assert isinstance(transport, H1Transport)
    return transport.pool


def _released(pool: H1Pool) -> anyio.Event:
    """Set once the pool got a connection back (kept or closed)."""
    released = anyio.Event()
    original = pool.release

    async def release(origin: Origin, connection: Any) -> None:
        await original(origin, connection)
        released.set()

    pool.release = release  # type: ignore[method-assign]
    return released


async def _answered(prompt: Awaitable[dict[str, Any]]) -> str:
    with anyio.fail_after(BOUND):
        answer = await prompt
    stop: str = answer["result"]["stopReason"]
    return stop


@pytest.mark.requirement("TAIL4-STREAM-001")
@pytest.mark.parametrize("kind", sorted(_KINDS))
async def test_the_prompt_is_answered_before_the_body_ends_then_the_connection_is_reused(
    kind: str, tmp_path: Path
) -> None:
    events, make = _KINDS[kind]
    gate = anyio.Event()
    scripts = [
        [_until_the_terminator(events("Hel", "lo")), gate, b"0\r\n\r\n"],
        [chunked(*events("again"))],
    ]
    async with KeepAliveServer(scripts) as server, make(server.base_url) as provider:
        pool = _pool(provider)
        released = _released(pool)
        origin: Origin = ("http", "127.0.0.1", server.port)
        config = scripted_config(tmp_path, provider)
        async with running_bridge(config) as editor:
            session = await editor.new_session(tmp_path)
            assert await _answered(editor.prompt(session, "hi")) == "end_turn"
            # Answered while the server still holds the body's end: the connection is
            # neither back in the pool nor closed.
            assert not gate.is_set()
            assert not released.is_set()
            assert pool.idle(origin) == 0
            assert not server.hung_up[0].is_set()
            gate.set()
            with anyio.fail_after(BOUND):
                await released.wait()  # the drain, in the background group, read the end
            assert pool.idle(origin) == 1
            assert await _answered(editor.prompt(session, "again")) == "end_turn"
            text = "".join(
                u["content"]["text"]
                for u in editor.updates(session)
                if u["sessionUpdate"] == "agent_message_chunk"
            )
            assert text == "Helloagain"
    assert [seen.connection for seen in server.seen] == [0, 0]


@pytest.mark.requirement("TAIL4-STREAM-001")
@pytest.mark.parametrize("kind", sorted(_KINDS))
async def test_a_body_end_that_never_comes_closes_the_connection(kind: str, tmp_path: Path) -> None:
    events, make = _KINDS[kind]
    never = anyio.Event()
    scripts = [
        [_until_the_terminator(events("Hel", "lo")), never],
        [chunked(*events("again"))],
    ]
    async with KeepAliveServer(scripts) as server, make(server.base_url) as provider:
        config = scripted_config(tmp_path, provider)
        async with running_bridge(config) as editor:
            session = await editor.new_session(tmp_path)
            assert await _answered(editor.prompt(session, "hi")) == "end_turn"
            with anyio.fail_after(BOUND):
                await server.hung_up[0].wait()  # the drain gave up and closed it
            assert await _answered(editor.prompt(session, "again")) == "end_turn"
        assert _pool(provider).idle(("http", "127.0.0.1", server.port)) == 1
    assert [seen.connection for seen in server.seen] == [0, 1]
