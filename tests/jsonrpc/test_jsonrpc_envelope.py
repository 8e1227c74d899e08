"""Classification of inbound JSON values into JSON-RPC messages, without an event loop."""

from __future__ import annotations

import pytest

from acp_bridge.jsonrpc import Invalid, Notification, Request, Response, classify

pytestmark = pytest.mark.requirement("RPC-ENVELOPE-001")


def test_request_notification_response() -> None:
    assert classify({"jsonrpc": "2.0", "id": 1, "method": "m", "params": {}}) == Request(1, "m", {})
    assert classify({"jsonrpc": "2.0", "id": "x", "method": "m"}) == Request("x", "m", None)
    assert classify({"jsonrpc": "2.0", "method": "n", "params": [1]}) == Notification("n", [1])
    assert classify({"jsonrpc": "2.0", "id": 3, "result": None}) == Response(3, None, None)
    err = {"code": 1, "message": "m"}
    assert classify({"jsonrpc": "2.0", "id": 3, "error": err}) == Response(3, None, err)


@pytest.mark.parametrize(
    ("message", "answer_id", "reason"),
    [
        ({"id": 1, "method": "m"}, 1, '"jsonrpc" member must be exactly "2.0"'),
        ({"jsonrpc": "1.0", "id": 1, "method": "m"}, 1, '"jsonrpc"'),
        ({"jsonrpc": "2.0", "id": 1, "method": 7}, 1, '"method" member must be'),
        ({"jsonrpc": "2.0", "id": 1, "method": ""}, 1, '"method" member must be'),
        ({"jsonrpc": "2.0", "id": True, "method": "m"}, None, '"id" member'),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "m"}, None, '"id" member'),
        ({"jsonrpc": "2.0", "id": None, "method": "m"}, None, '"id" member'),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "m"}, None, '"id" member'),
        ({"jsonrpc": "2.0", "id": 2, "method": "m", "params": 3}, 2, '"params" member'),
        ({"jsonrpc": "2.0", "id": 2}, 2, '"method" member'),
        ({"jsonrpc": "2.0", "result": 1}, None, "must carry the id"),
        ({"jsonrpc": "2.0", "id": 4, "result": 1, "error": {}}, None, "both"),
    ],
)
def test_invalid_messages_name_the_problem(
    message: dict[str, object], answer_id: object, reason: str
) -> None:
    out = classify(message)  # type: ignore[arg-type]
    assert isinstance(out, Invalid)
    assert out.id == answer_id
    assert reason in out.reason


def test_batches_and_scalars_are_invalid_with_null_id() -> None:
    assert classify([]) == Invalid(None, "batch requests are not supported by ACP")
    assert classify(3) == Invalid(None, "a JSON-RPC message must be a JSON object")
