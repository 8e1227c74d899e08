"""`JsonRpcPeer.respond` (REPLY4-004): a handler writes its own response before it returns, so
the turn's own task puts the prompt response on the wire without its return travelling up
through the layers first. Exactly one response per request still: nothing more is written
when the handler returns, raises or is cancelled after it, and a `$/cancel_request` from then
on finds no request; the `Reply`'s follow-up still runs once the handler returned."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from jsonrpc.test_jsonrpc_peer import served
from rawpeer import MemoryLink, RawPeer

from acp_bridge._json import JsonValue
from acp_bridge.jsonrpc import EncodedResult, JsonRpcPeer, Reply
from acp_bridge.wire import encode

pytestmark = [pytest.mark.anyio, pytest.mark.requirement("REPLY4-004")]


class _Handler:
    """`respond` writes the answer; `after` then runs before the handler returns."""

    def __init__(self) -> None:
        self.peer: JsonRpcPeer | None = None
        self.responded: list[bool] = []
        self.followed: list[str] = []
        self.answered = anyio.Event()
        self.go_on = anyio.Event()
        self.cancel_seen = anyio.Event()

    async def handle_request(self, method: str, params: JsonValue) -> JsonValue | Reply:
        assert self.peer is not None

        async def then() -> None:
            self.followed.append(method)

        result: JsonValue | EncodedResult = {"n": 1}
        if method.endswith("encoded"):
            result = EncodedResult('{"n":1}', lambda: {"n": 1})
        reply = Reply(result, then)
        if method.startswith("cancelled first"):
            self.answered.set()  # the test cancels the request, then lets it go on
            with anyio.CancelScope(shield=True):  # reaches `respond` with no checkpoint
                await self.go_on.wait()
        self.responded.append(await self.peer.respond(reply))
        self.responded.append(await self.peer.respond(reply))  # answered already: False
        if method == "raises after":
            raise RuntimeError("after the answer")
        if method == "waits after":
            self.answered.set()
            try:
                await self.go_on.wait()
            except anyio.get_cancelled_exc_class():
                self.cancel_seen.set()
                raise
        return reply

    async def handle_notification(self, method: str, params: JsonValue) -> None:
        pass


@pytest.fixture
async def connected() -> AsyncIterator[tuple[RawPeer, _Handler, JsonRpcPeer]]:
    async with served(_Handler()) as connection:
        yield connection


async def _nothing_more(client: RawPeer) -> None:
    """A request answered after the ones before proves nothing else was written for them."""
    answer = await client.call("plain", None)
    assert answer["result"] == {"n": 1}


@pytest.mark.parametrize("method", ["plain", "encoded"])
async def test_respond_writes_the_one_response_then_the_follow_up_runs(
    connected: tuple[RawPeer, _Handler, JsonRpcPeer], method: str
) -> None:
    client, handler, _ = connected
    answer = await client.call(method, None)
    assert client.raw_lines == [encode({"jsonrpc": "2.0", "id": 1, "result": {"n": 1}})]
    assert answer["id"] == 1
    await _nothing_more(client)
    assert handler.responded == [True, False, True, False]
    assert handler.followed == [method, "plain"]


async def test_an_error_raised_after_the_response_is_not_written(
    connected: tuple[RawPeer, _Handler, JsonRpcPeer],
) -> None:
    client, handler, _ = connected
    assert (await client.call("raises after", None))["result"] == {"n": 1}
    await _nothing_more(client)
    assert [m["id"] for m in client.received] == [1, 2]
    assert handler.followed == ["plain"]  # no Reply came back from the handler that raised


async def test_a_cancel_request_after_the_response_finds_no_request(
    connected: tuple[RawPeer, _Handler, JsonRpcPeer],
) -> None:
    client, handler, _ = connected
    request_id = await client.request("waits after", None)
    assert (await client.receive())["result"] == {"n": 1}
    with anyio.fail_after(10):
        await handler.answered.wait()
    await client.notify("$/cancel_request", {"requestId": request_id})
    await _nothing_more(client)  # read after the cancel: it found nothing to cancel
    assert not handler.cancel_seen.is_set()
    handler.go_on.set()
    await _nothing_more(client)
    assert [m.get("id") for m in client.received] == [1, 2, 3]
    assert handler.followed == ["plain", "waits after", "plain"]


@pytest.mark.parametrize("method", ["cancelled first", "cancelled first, encoded"])
async def test_a_request_cancelled_before_it_responds_gets_one_answer(
    connected: tuple[RawPeer, _Handler, JsonRpcPeer], method: str
) -> None:
    """Cancelled before `respond`: one answer, the result when the write went through (an
    encoded result is written without a checkpoint first; a transport may still have one),
    else the request's cancellation error, never both; the follow-up only after a result."""
    client, handler, _ = connected
    request_id = await client.request(method, None)
    with anyio.fail_after(10):
        await handler.answered.wait()
    await client.notify("$/cancel_request", {"requestId": request_id})
    await _nothing_more(client)  # the cancel was read: the request's scope is cancelled
    handler.go_on.set()
    answer: dict[str, Any] = await client.receive()
    cancelled = {"error": {"code": -32800, "message": "Request cancelled"}}
    assert answer in (
        {"jsonrpc": "2.0", "id": request_id, **w} for w in (cancelled, {"result": {"n": 1}})
    )
    await _nothing_more(client)
    assert [m.get("id") for m in client.received] == [2, request_id, 3]
    done = [method] if "result" in answer else []
    assert handler.followed == ["plain", *done, "plain"]


async def test_respond_outside_a_handler_writes_nothing() -> None:
    async with MemoryLink() as link:
        peer = JsonRpcPeer(link.agent_side)
        assert await peer.respond(Reply({"n": 1})) is False
        other = JsonRpcPeer(link.agent_side)
        handler = _Handler()
        handler.peer = other  # a handler of another peer: `other` is not answering it
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer.serve, handler)
            client = RawPeer(link.client_side)
            assert (await client.call("plain", None))["result"] == {"n": 1}
            tg.cancel_scope.cancel()
        assert handler.responded == [False, False]
        assert len(client.received) == 1
