"""The bridge's HTTP/1.1 transport on real loopback sockets: reuse, closing, timeouts."""

from __future__ import annotations

import gzip
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest
from loopback_h1 import CLOSE, KeepAliveServer, chunked, sse_events

from acp_bridge.providers import ModelRequest, TextDelta, UserTurn
from acp_bridge.providers.http import HttpProviderOptions, OpenAIProvider
from acp_bridge.providers.http._h1_connection import H1Body
from acp_bridge.providers.http._h1_transport import BODY_EXTENSION, H1Transport
from acp_bridge.providers.http._read_timeout import FirstTokenTimeout, SwitchedReadTimeout

pytestmark = pytest.mark.anyio
REQUEST = ModelRequest(model="", messages=[UserTurn(("hi",))])
BOUND = 10  # every wait in these tests


def client(**kwargs: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=H1Transport(proxies={}, **kwargs), timeout=BOUND)


async def body_of(response: httpx.Response) -> bytes:
    return b"".join([piece async for piece in response.aiter_raw()])


def origin(server: KeepAliveServer) -> tuple[str, str, int]:
    return ("http", "127.0.0.1", server.port)


@pytest.mark.requirement("HTTP1-POOL-001")
async def test_a_request_after_a_request_reuses_the_connection() -> None:
    replies = [[chunked(b"one")], [b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\ntwo"]]
    async with KeepAliveServer(replies) as server, client() as http:
        with anyio.fail_after(BOUND):
            first = await http.post(server.base_url + "/a", content=b"{}")
            second = await http.post(server.base_url + "/b", content=b"[1]")
    assert (first.content, second.content) == (b"one", b"two")
    assert [seen.connection for seen in server.seen] == [0, 0]
    assert server.seen[1].headers["content-length"] == "3"
    assert server.seen[1].headers["host"] == f"127.0.0.1:{server.port}"
    assert server.seen[1].body == b"[1]"


@pytest.mark.requirement("HTTP1-POOL-001")
async def test_a_model_call_after_a_model_call_reuses_the_connection() -> None:
    """The drain contract: after [DONE] the rest of the body is read and the connection
    pooled, so the next turn's request goes out on it."""
    replies = [[chunked(*sse_events("Hel", "lo"))], [chunked(*sse_events("again"))]]
    async with KeepAliveServer(replies) as server:
        options = HttpProviderOptions(
            "m", base_url=f"{server.base_url}/v1", extra_headers={"x-extra": "1"}
        )
        async with OpenAIProvider(options) as model:
            with anyio.fail_after(BOUND):
                first = [event async for event in model.stream(REQUEST)]
                second = [event async for event in model.stream(REQUEST)]
    assert [e for e in first if isinstance(e, TextDelta)] == [TextDelta("Hel"), TextDelta("lo")]
    assert TextDelta("again") in second
    assert [seen.connection for seen in server.seen] == [0, 0]
    headers = server.seen[0].headers
    assert headers["user-agent"].startswith("acp-bridge/")
    assert (headers["x-extra"], headers["accept-encoding"]) == ("1", "identity")


@pytest.mark.requirement("HTTP1-POOL-001")
async def test_an_idle_connection_the_server_closed_is_not_reused() -> None:
    replies = [[chunked(b"one"), CLOSE], [chunked(b"two")]]
    async with KeepAliveServer(replies) as server, client() as http:
        with anyio.fail_after(BOUND):
            assert (await http.post(server.base_url, content=b"")).content == b"one"
            await server.hung_up[0].wait()  # the server closed the idle connection
            assert (await http.post(server.base_url, content=b"")).content == b"two"
    assert [seen.connection for seen in server.seen] == [0, 1]


@pytest.mark.requirement("HTTP1-POOL-001")
@pytest.mark.parametrize(
    "reply",
    [
        chunked(b"one", head=b"connection: close\r\n"),
        b"HTTP/1.0 200 OK\r\ncontent-length: 3\r\n\r\none",
        b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\noneEXTRA",
    ],
    ids=["connection-close", "http-1.0", "bytes-after-the-body"],
)
async def test_a_connection_that_must_not_be_reused_is_closed(reply: bytes) -> None:
    replies = [[reply], [chunked(b"two")]]
    async with KeepAliveServer(replies) as server, client() as http:
        with anyio.fail_after(BOUND):
            assert (await http.post(server.base_url, content=b"")).content == b"one"
            await server.hung_up[0].wait()  # the client closed it
            assert (await http.post(server.base_url, content=b"")).content == b"two"
    assert [seen.connection for seen in server.seen] == [0, 1]


@pytest.mark.requirement("HTTP1-POOL-001")
@pytest.mark.parametrize("how", ["close", "cancel", "error"])
async def test_a_body_abandoned_mid_stream_closes_the_connection(how: str) -> None:
    stall = anyio.Event()
    head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n"
    async with KeepAliveServer([[head, stall]]) as server:
        transport = H1Transport(proxies={})
        async with httpx.AsyncClient(transport=transport, timeout=BOUND) as http:
            with anyio.fail_after(BOUND):
                try:
                    async with http.stream("POST", server.base_url, content=b"") as response:
                        pieces = response.aiter_raw()
                        assert await anext(pieces) == b"hello"
                        if how == "cancel":
                            with anyio.CancelScope() as scope:
                                scope.cancel()
                                await anext(pieces)
                        elif how == "error":
                            raise RuntimeError("the consumer failed")
                except RuntimeError:
                    assert how == "error"
                await server.hung_up[0].wait()
            assert transport.pool.idle(origin(server)) == 0
        stall.set()


@pytest.mark.requirement("HTTP1-BODY-001")
async def test_one_read_of_many_chunks_is_one_piece() -> None:
    events = sse_events(*(f"t{i}" for i in range(40)))
    release = anyio.Event()
    reply = chunked(*events)
    async with KeepAliveServer([[reply[:-5], release, reply[-5:]]]) as server, client() as http:
        with anyio.fail_after(BOUND):
            async with http.stream("POST", server.base_url, content=b"") as response:
                body = response.extensions[BODY_EXTENSION]
                assert isinstance(body, H1Body)
                first = await anext(aiter(body))
                release.set()
                rest = [piece async for piece in body]
    assert first == b"".join(events)  # 42 HTTP chunks, one socket read: one piece
    assert rest == []


async def stalled_body(
    bound: SwitchedReadTimeout | float, steps: list[bytes | anyio.Event]
) -> AsyncIterator[bytes]:
    """Pieces of a response whose server plays `steps`, read with the read timeout `bound`."""
    async with KeepAliveServer([steps]) as server, client() as http:
        timeout = httpx.Timeout(BOUND, read=bound)
        request = http.build_request("POST", server.base_url, content=b"", timeout=timeout)
        response = await http.send(request, stream=True)
        try:
            async for piece in response.aiter_raw():
                yield piece
        finally:
            await response.aclose()


@pytest.mark.requirement("HTTP1-TIMEOUT-001")
async def test_until_the_first_token_only_the_first_token_deadline_bounds_a_read() -> None:
    """TIMEOUT-001 in the transport: with an idle timeout of 10 ms the server's 200 ms
    pause before its first chunk is waited out (the first-token deadline is far); once the
    first token is switched on, a stall ends in a ReadTimeout, not a FirstTokenTimeout."""
    stall = anyio.Event()
    first = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    bound = SwitchedReadTimeout(0.01, anyio.current_time() + 60)
    pause = anyio.Event()
    steps: list[bytes | anyio.Event] = [first, pause, b"2\r\nhi\r\n", stall]
    with anyio.fail_after(BOUND):
        async with anyio.create_task_group() as group:

            async def release_later() -> None:
                await anyio.sleep(0.2)  # a stimulus: the model's prompt processing
                pause.set()

            group.start_soon(release_later)
            pieces = stalled_body(bound, steps)
            assert await anext(pieces) == b"hi"
            bound.first_token()
            with pytest.raises(httpx.ReadTimeout) as raised:
                await anext(pieces)
            assert not isinstance(raised.value, FirstTokenTimeout)
            await pieces.aclose()
    stall.set()


@pytest.mark.requirement("HTTP1-TIMEOUT-001")
async def test_the_first_token_deadline_ends_a_silent_response() -> None:
    stall = anyio.Event()
    head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    bound = SwitchedReadTimeout(60, anyio.current_time() + 0.2)
    with anyio.fail_after(BOUND), pytest.raises(FirstTokenTimeout):
        async for _ in stalled_body(bound, [head, stall]):
            pass
    stall.set()


@pytest.mark.requirement("HTTP1-TIMEOUT-001")
async def test_connect_read_and_write_timeouts_are_httpx_errors() -> None:
    # A listener that never accepts: the kernel completes the handshake and buffers what
    # fits, then nothing is read and nothing answered.
    async with (
        await anyio.create_tcp_listener(local_host="127.0.0.1") as listener,
        client() as http,
    ):
        url = f"http://127.0.0.1:{listener.extra(anyio.abc.SocketAttribute.local_port)}"
        with anyio.fail_after(BOUND):
            with pytest.raises(httpx.ConnectTimeout):
                await http.post(url, content=b"", timeout=httpx.Timeout(1, connect=0))
            with pytest.raises(httpx.ReadTimeout):
                await http.post(url, content=b"", timeout=httpx.Timeout(1, read=0.1))
            with pytest.raises(httpx.WriteTimeout):  # 64 MiB do not fit the socket buffers
                await http.post(url, content=bytes(64 << 20), timeout=httpx.Timeout(1, write=0.2))


@pytest.mark.requirement("HTTP1-TIMEOUT-001")
async def test_waiting_for_a_free_connection_is_bounded_by_the_pool_timeout() -> None:
    stall = anyio.Event()
    head = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
    async with KeepAliveServer([[head, stall]]) as server:
        transport = H1Transport(proxies={})
        transport.pool._max_connections = 1
        async with httpx.AsyncClient(transport=transport, timeout=BOUND) as http:
            with anyio.fail_after(BOUND):
                async with http.stream("POST", server.base_url, content=b""):
                    with pytest.raises(httpx.PoolTimeout):
                        await http.post(
                            server.base_url, content=b"", timeout=httpx.Timeout(1, pool=0.1)
                        )
        stall.set()


@pytest.mark.requirement("HTTP1-POOL-001")
async def test_cancelling_the_wait_for_the_head_closes_the_connection() -> None:
    stall = anyio.Event()
    async with KeepAliveServer([[stall]]) as server:
        transport = H1Transport(proxies={})
        async with httpx.AsyncClient(transport=transport, timeout=BOUND) as http:
            with anyio.fail_after(BOUND):
                async with anyio.create_task_group() as group:

                    async def post() -> None:
                        await http.post(server.base_url, content=b"")

                    group.start_soon(post)
                    while not server.seen:  # the request arrived
                        await anyio.wait_all_tasks_blocked()
                    group.cancel_scope.cancel()
                await server.hung_up[0].wait()
            assert transport.pool.idle(origin(server)) == 0
        stall.set()


@pytest.mark.requirement("HTTP1-BODY-001")
async def test_a_body_the_server_compressed_anyway_still_decodes() -> None:
    body = gzip.compress(b"".join(sse_events("zip", "ped")))
    reply = chunked(body[:20], body[20:], head=b"content-encoding: gzip\r\n")
    async with KeepAliveServer([[reply]]) as server:
        options = HttpProviderOptions("m", base_url=f"{server.base_url}/v1")
        async with OpenAIProvider(options) as model:
            with anyio.fail_after(BOUND):
                events = [event async for event in model.stream(REQUEST)]
    assert [e for e in events if isinstance(e, TextDelta)] == [TextDelta("zip"), TextDelta("ped")]
    assert server.seen[0].headers["accept-encoding"] == "identity"
