"""Pieces of many SSE events (one socket read when the bridge fell behind), cut anywhere,
decode through the transport exactly as one event at a time does."""

from __future__ import annotations

import anyio
import pytest
from loopback_h1 import KeepAliveServer, sse_events

from acp_bridge.providers import ModelRequest, TextDelta, UserTurn
from acp_bridge.providers.http import HttpProviderOptions, OpenAIProvider

pytestmark = pytest.mark.requirement("HTTP1-BODY-001")
REQUEST = ModelRequest(model="", messages=[UserTurn(("hi",))])


def framed(piece: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(piece), piece)


@pytest.mark.anyio
async def test_a_stream_cut_mid_event_decodes_the_same_at_every_cut() -> None:
    """The server sends the body up to `cut`, waits until the bridge has read it (every task
    blocked), then the rest: each read ends at the cut, in the middle of an event or not."""
    body = b"".join(sse_events("Hel", "lo", " wor", "ld"))
    expected = [TextDelta(text) for text in ("Hel", "lo", " wor", "ld")]
    cuts = range(1, len(body), 17)  # through every event, its tail and its framing
    head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    releases = [anyio.Event() for _ in cuts]
    replies = [
        [head + framed(body[:cut]), release, framed(body[cut:]) + b"0\r\n\r\n"]
        for cut, release in zip(cuts, releases, strict=True)
    ]
    async with KeepAliveServer(replies) as server:
        options = HttpProviderOptions("m", base_url=f"{server.base_url}/v1")
        async with OpenAIProvider(options) as model:
            for index, cut in enumerate(cuts):
                got: list[TextDelta] = []
                with anyio.fail_after(10):
                    async with anyio.create_task_group() as group:

                        async def consume(got: list[TextDelta] = got) -> None:
                            async for event in model.stream(REQUEST):
                                if isinstance(event, TextDelta):
                                    got.append(event)

                        group.start_soon(consume)
                        while len(server.seen) <= index:
                            await anyio.wait_all_tasks_blocked()
                        await anyio.wait_all_tasks_blocked()
                        releases[index].set()
                assert got == expected, cut
    assert {seen.connection for seen in server.seen} == {0}
