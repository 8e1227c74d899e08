"""The JSON-RPC peer over an in-memory pair: dispatch, errors, cancellation, outbound calls."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Protocol, TypeVar

import anyio
import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rawpeer import MemoryLink, RawPeer

from acp_bridge._json import JsonValue
from acp_bridge.errors import InvalidParams, MethodNotFound, PeerError, PeerGone
from acp_bridge.jsonrpc import JsonRpcPeer, Reply

pytestmark = pytest.mark.anyio


class _Params(pydantic.BaseModel):
    name: str
    count: int


class EchoHandler:
    """A tiny handler used to exercise the peer."""

    def __init__(self) -> None:
        self.peer: JsonRpcPeer | None = None
        self.notes: list[tuple[str, JsonValue]] = []
        self.started = anyio.Event()
        self.release = anyio.Event()
        self.cancelled = anyio.Event()
        self.followed_up: list[str] = []

    async def handle_request(self, method: str, params: JsonValue) -> JsonValue | Reply:
        if method == "echo":
            return params
        if method == "boom":
            raise RuntimeError("secret token sk-live-123 leaked?")
        if method == "typed":
            model = _Params.model_validate(params)
            return {"ok": model.name}
        if method == "bad":
            raise InvalidParams("cwd must be absolute", {"field": "cwd"})
        if method == "slow":
            self.started.set()
            try:
                await self.release.wait()
            except anyio.get_cancelled_exc_class():
                self.cancelled.set()
                raise
            return "done"
        if method == "ask":
            assert self.peer is not None
            return await self.peer.request("client/question", {"q": 1})
        if method == "with_follow_up":

            async def then() -> None:
                assert self.peer is not None
                await self.peer.notify("after", {"n": 1})
                self.followed_up.append("x")

            return Reply({"first": True}, then)
        raise MethodNotFound(f"Method not found: {method}")

    async def handle_notification(self, method: str, params: JsonValue) -> None:
        self.notes.append((method, params))


class _Served(Protocol):
    peer: JsonRpcPeer | None

    async def handle_request(self, method: str, params: JsonValue) -> JsonValue | Reply: ...

    async def handle_notification(self, method: str, params: JsonValue) -> None: ...


H = TypeVar("H", bound=_Served)


@asynccontextmanager
async def served(handler: H) -> AsyncIterator[tuple[RawPeer, H, JsonRpcPeer]]:
    """`handler` served by a peer (its `peer`) over a memory pair, and the raw client."""
    async with MemoryLink() as link:
        peer = JsonRpcPeer(link.agent_side, drain_timeout=2.0)
        handler.peer = peer
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer.serve, handler)
            yield RawPeer(link.client_side), handler, peer
            tg.cancel_scope.cancel()


@pytest.fixture
async def connected() -> AsyncIterator[tuple[RawPeer, EchoHandler, JsonRpcPeer]]:
    async with served(EchoHandler()) as connection:
        yield connection


async def test_request_gets_result(connected: tuple[RawPeer, EchoHandler, JsonRpcPeer]) -> None:
    client, _, _ = connected
    assert await client.call("echo", {"a": [1, "é"]}) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"a": [1, "é"]},
    }


@pytest.mark.requirement("RPC-ERR-001")
@pytest.mark.parametrize(
    ("line", "code", "answer_id"),
    [
        (b"{nope\n", -32700, None),
        (b'{"a":"\xff"}\n', -32700, None),
        (b"[]\n", -32600, None),
        (b"7\n", -32600, None),
        (b'{"jsonrpc":"2.0","id":5}\n', -32600, 5),
        (b'{"jsonrpc":"1.0","id":6,"method":"echo"}\n', -32600, 6),
        (b'{"jsonrpc":"2.0","id":[1],"method":"echo"}\n', -32600, None),
        (b'{"jsonrpc":"2.0","id":7,"method":"nope"}\n', -32601, 7),
        (b'{"jsonrpc":"2.0","id":8,"method":"_vendor/thing"}\n', -32601, 8),
        (b'{"jsonrpc":"2.0","id":9,"method":"bad","params":{}}\n', -32602, 9),
    ],
)
async def test_malformed_input_gets_exact_error_and_serving_continues(
    connected: tuple[RawPeer, EchoHandler, JsonRpcPeer], line: bytes, code: int, answer_id: Any
) -> None:
    client, _, _ = connected
    await client.send_bytes(line)
    error = await client.receive()
    assert error["jsonrpc"] == "2.0"
    assert error["id"] == answer_id
    assert error["error"]["code"] == code
    assert isinstance(error["error"]["message"], str)
    assert error["error"]["message"]
    assert await client.call("echo", [1]) == {"jsonrpc": "2.0", "id": 1, "result": [1]}


@pytest.mark.requirement("RPC-ERR-002")
async def test_internal_error_has_no_traceback_or_secret(
    connected: tuple[RawPeer, EchoHandler, JsonRpcPeer], caplog: pytest.LogCaptureFixture
) -> None:
    client, _, _ = connected
    reply = await client.call("boom", {})
    assert reply["error"] == {"code": -32603, "message": "Internal error"}
    assert b"sk-live" not in client.raw_lines[-1]
    assert "Traceback" not in client.raw_lines[-1].decode()
    assert any("sk-live" in (r.exc_text or "") or r.exc_info for r in caplog.records)


@pytest.mark.requirement("RPC-ERR-003")
async def test_validation_errors_name_fields_without_echoing_input(
    connected: tuple[RawPeer, EchoHandler, JsonRpcPeer],
) -> None:
    client, _, _ = connected
    reply = await client.call("typed", {"name": "sk-secret", "count": "many"})
    assert reply["error"]["code"] == -32602
    assert reply["error"]["data"] == {
        "errors": [{"field": "count", "problem": reply["error"]["data"]["errors"][0]["problem"]}]
    }
    assert b"sk-secret" not in client.raw_lines[-1]
    assert b"many" not in client.raw_lines[-1]


async def test_notifications_are_never_answered(
    connected: tuple[RawPeer, EchoHandler, JsonRpcPeer],
) -> None:
    client, handler, _ = connected
    await client.notify("note", {"x": 1})
    await client.notify("_unknown/ext", {})
    assert await client.call("echo", [2]) == {"jsonrpc": "2.0", "id": 1, "result": [2]}
    assert ("note", {"x": 1}) in handler.notes
    assert all("method" not in m and m["id"] == 1 for m in client.received)


@pytest.mark.requirement("RPC-CANCEL-001")
async def test_cancel_request_ends_inbound_request_with_32800(
    connected: tuple[RawPeer, EchoHandler, JsonRpcPeer],
) -> None:
    client, handler, _ = connected
    request_id = await client.request("slow", {})
    with anyio.fail_after(5):
        await handler.started.wait()
    await client.notify("$/cancel_request", {"requestId": request_id})
    reply = await client.response(request_id)
    assert reply["error"]["code"] == -32800
    assert handler.cancelled.is_set()


async def test_concurrent_requests_do_not_block_each_other(
    connected: tuple[RawPeer, EchoHandler, JsonRpcPeer],
) -> None:
    client, handler, _ = connected
    slow_id = await client.request("slow", {})
    with anyio.fail_after(5):
        await handler.started.wait()
    assert (await client.call("echo", [1]))["result"] == [1]
    handler.release.set()
    assert (await client.response(slow_id))["result"] == "done"


async def test_duplicate_inflight_id_is_rejected(
    connected: tuple[RawPeer, EchoHandler, JsonRpcPeer],
) -> None:
    client, handler, _ = connected
    await client.request("slow", {}, id="same")
    with anyio.fail_after(5):
        await handler.started.wait()
    await client.request("echo", [1], id="same")
    reply = await client.receive()
    assert reply["error"]["code"] == -32600
    handler.release.set()
    assert (await client.response("same"))["result"] == "done"


@pytest.mark.requirement("RPC-OUT-001")
async def test_outbound_request_correlates_and_maps_errors(
    connected: tuple[RawPeer, EchoHandler, JsonRpcPeer],
) -> None:
    client, _, _ = connected
    ask_id = await client.request("ask", {})
    question = await client.receive()
    assert question["method"] == "client/question"
    await client.send({"jsonrpc": "2.0", "id": question["id"], "result": {"answer": 42}})
    assert (await client.response(ask_id))["result"] == {"answer": 42}

    ask_id = await client.request("ask", {})
    question = await client.receive()
    await client.send(
        {"jsonrpc": "2.0", "id": question["id"], "error": {"code": -32002, "message": "gone"}}
    )
    # The handler let PeerError escape: the client sees a plain internal error.
    assert (await client.response(ask_id))["error"]["code"] == -32603


@pytest.mark.requirement("RPC-CANCEL-002")
async def test_cancelled_outbound_request_sends_cancel_request(
    connected: tuple[RawPeer, EchoHandler, JsonRpcPeer],
) -> None:
    client, _, peer = connected
    outcome: list[BaseException] = []

    async def ask() -> None:
        try:
            await peer.request("client/slow", {})
        except BaseException as exc:
            outcome.append(exc)
            raise

    async with anyio.create_task_group() as tg:
        tg.start_soon(ask)
        sent = await client.receive()
        assert sent["method"] == "client/slow"
        tg.cancel_scope.cancel()
    courtesy = await client.receive()
    assert courtesy == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": sent["id"]},
    }
    assert isinstance(outcome[0], anyio.get_cancelled_exc_class())


async def test_peer_error_carries_code_message_and_data(
    connected: tuple[RawPeer, EchoHandler, JsonRpcPeer],
) -> None:
    client, _, peer = connected
    result: list[BaseException] = []

    async def ask() -> None:
        try:
            await peer.request("fs/read_text_file", {"path": "/x"})
        except PeerError as exc:
            result.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(ask)
        sent = await client.receive()
        await client.send(
            {
                "jsonrpc": "2.0",
                "id": sent["id"],
                "error": {"code": -32002, "message": "Resource not found", "data": {"uri": "/x"}},
            }
        )
    error = result[0]
    assert isinstance(error, PeerError)
    assert (error.code, error.message, error.data) == (-32002, "Resource not found", {"uri": "/x"})


async def test_follow_up_runs_after_response_is_written(
    connected: tuple[RawPeer, EchoHandler, JsonRpcPeer],
) -> None:
    client, _handler, _ = connected
    request_id = await client.request("with_follow_up", {})
    first = await client.receive()
    second = await client.receive()
    assert first == {"jsonrpc": "2.0", "id": request_id, "result": {"first": True}}
    assert second["method"] == "after"


@pytest.mark.requirement("RPC-OUT-002")
async def test_outbound_request_fails_with_peer_gone_at_end_of_input() -> None:
    async with MemoryLink() as link, anyio.create_task_group() as tg:
        agent_side, client_side = link.agent_side, link.client_side
        peer = JsonRpcPeer(agent_side, drain_timeout=5.0)
        handler = EchoHandler()
        handler.peer = peer
        client = RawPeer(client_side)
        tg.start_soon(peer.serve, handler)
        ask_id = await client.request("ask", {})
        assert (await client.receive())["method"] == "client/question"
        await client_side.send_eof()
        reply = await client.response(ask_id)
    assert reply["error"]["code"] == -32603
    assert peer.closed
    with pytest.raises(PeerGone):
        await peer.request("x", {})


async def test_requests_written_before_eof_are_all_answered() -> None:
    async with MemoryLink() as link, anyio.create_task_group() as tg:
        client_side = link.client_side
        peer = JsonRpcPeer(link.agent_side)
        client = RawPeer(client_side)
        tg.start_soon(peer.serve, EchoHandler())
        for i in range(1, 4):
            await client.request("echo", [i])
        await client_side.send_eof()
        answers = [await client.receive() for _ in range(3)]
    assert sorted(a["result"][0] for a in answers) == [1, 2, 3]


@pytest.mark.requirement("RPC-ERR-001")
@settings(
    max_examples=60,
    suppress_health_check=[
        *settings.default.suppress_health_check,
        HealthCheck.function_scoped_fixture,
    ],
)
@given(
    lines=st.lists(
        st.one_of(
            st.binary(max_size=60).map(lambda b: b.replace(b"\n", b" ")),
            st.dictionaries(
                st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"]),
                st.one_of(
                    st.none(),
                    st.booleans(),
                    st.integers(),
                    st.text(max_size=5),
                    st.sampled_from(["2.0", "echo", "nope"]),
                    st.lists(st.integers(), max_size=2),
                ),
            ).map(lambda d: __import__("json").dumps(d).encode()),
        ),
        max_size=6,
    )
)
def test_arbitrary_input_gets_only_valid_errors_and_serving_continues(lines: list[bytes]) -> None:
    async def main() -> None:
        async with MemoryLink() as link, anyio.create_task_group() as tg:
            peer = JsonRpcPeer(link.agent_side, max_line_bytes=1024)
            client = RawPeer(link.client_side)
            tg.start_soon(peer.serve, EchoHandler())
            for line in lines:
                await client.send_bytes(line + b"\n")
            probe = await client.request("echo", ["probe"], id="probe-id")
            while True:
                message = await client.receive()
                if message.get("id") == probe and "result" in message:
                    break
                assert message["jsonrpc"] == "2.0"
                assert "method" not in message
                if "error" in message:
                    assert isinstance(message["error"]["code"], int)
                    assert isinstance(message["error"]["message"], str)
                    assert set(message) == {"jsonrpc", "id", "error"}
                    assert message["id"] is None or isinstance(message["id"], int | str)
                else:
                    assert set(message) == {"jsonrpc", "id", "result"}
            tg.cancel_scope.cancel()

    anyio.run(main)
