"""A result its handler encoded itself (`EncodedResult`, REPLY4-002): the peer writes the
response around the text, exactly the line the generic encoder writes, without encoding or
scanning the result; the tracer sees the message; a lone surrogate (in the id or the result)
falls back to the generic encoder, which ASCII-escapes the whole line."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonrpc.test_jsonrpc_hold import RecordingTransport
from rawpeer import MemoryLink, RawPeer

from acp_bridge._json import JsonValue
from acp_bridge.jsonrpc import EncodedResult, JsonRpcPeer, Reply, RequestId
from acp_bridge.jsonrpc._writer import LineWriter
from acp_bridge.wire import encode

pytestmark = pytest.mark.requirement("REPLY4-002")

_strings = st.text(max_size=8) | st.text(st.characters(categories=["Cs", "Cc", "Lo"]), max_size=4)
_values: st.SearchStrategy[JsonValue] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | _strings,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_strings, inner, max_size=3),
    max_leaves=8,
)
_ids: st.SearchStrategy[RequestId] = st.integers() | _strings


def _text(value: JsonValue) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _response(request_id: RequestId, value: JsonValue) -> dict[str, JsonValue]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


@given(_ids, _values)
def test_the_line_is_what_the_generic_encoder_writes(
    request_id: RequestId, value: JsonValue
) -> None:
    transport = RecordingTransport()
    traced: list[tuple[str, Any]] = []
    writer = LineWriter(transport, lambda d, m: traced.append((d, m)), lambda: None)
    anyio.run(writer.send_response, request_id, EncodedResult(_text(value), lambda: value))
    assert transport.sent == [encode(_response(request_id, value))]
    assert traced == [("out", _response(request_id, value))]


class _Handler:
    def __init__(self) -> None:
        self.peer: JsonRpcPeer | None = None

    async def handle_request(self, method: str, params: JsonValue) -> JsonValue | Reply:
        assert self.peer is not None
        assert isinstance(params, dict)
        value = params["value"]
        self.peer.notify_with_next("held", {"n": 1})  # rides with the response (TAIL-001)
        return Reply(EncodedResult(_text(value), lambda: value))

    async def handle_notification(self, method: str, params: JsonValue) -> None:
        pass


def _no_generic_encoding(*args: object) -> Any:
    raise AssertionError("the generic encoder ran on an encoded result")


@pytest.mark.anyio
@pytest.mark.parametrize("request_id", [7, "req-é", "\ud800"])
async def test_the_peer_writes_an_encoded_result_with_the_held_line(
    request_id: RequestId, monkeypatch: pytest.MonkeyPatch
) -> None:
    if request_id != "\ud800":  # the surrogate falls back to the generic encoder
        monkeypatch.setattr("acp_bridge.jsonrpc._writer.encode", _no_generic_encoding)
        monkeypatch.setattr("acp_bridge.jsonrpc._writer.streamable", _no_generic_encoding)
    value: JsonValue = {"stopReason": "end_turn", "text": "é\n", "n": [1.5, None]}
    async with MemoryLink() as link, anyio.create_task_group() as tg:
        handler = _Handler()
        handler.peer = JsonRpcPeer(link.agent_side)
        tg.start_soon(handler.peer.serve, handler)
        client = RawPeer(link.client_side)
        await client.request("answer", {"value": value}, id=request_id)
        held, answer = await client.receive(), await client.receive()
        tg.cancel_scope.cancel()
    assert held == {"jsonrpc": "2.0", "method": "held", "params": {"n": 1}}
    assert client.raw_lines == [encode(held), encode(_response(request_id, value))]
    assert answer == _response(request_id, value)
