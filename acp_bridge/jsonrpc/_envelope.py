"""Sans-IO classification of inbound JSON values into JSON-RPC 2.0 messages.

`classify` never raises: a value that is not a valid request, notification or response
becomes an `Invalid` carrying the id to answer with (None when no usable id exists) and a
precise reason. Parameters must be structured (object or array) when present.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from acp_bridge._json import JsonValue
from acp_bridge.jsonrpc._limits import MAX_DEPTH, too_deep

__all__ = ["Inbound", "Invalid", "Notification", "Request", "RequestId", "Response", "classify"]

RequestId: TypeAlias = int | str


@dataclass(frozen=True, slots=True)
class Request:
    """A request from the peer: its id, method and params."""

    id: RequestId
    method: str
    params: JsonValue


@dataclass(frozen=True, slots=True)
class Notification:
    """A notification from the peer: its method and params."""

    method: str
    params: JsonValue


@dataclass(frozen=True, slots=True)
class Response:
    """A response to one of our requests: exactly one of `result` / `error` is meaningful."""

    id: RequestId
    result: JsonValue
    error: dict[str, JsonValue] | None


@dataclass(frozen=True, slots=True)
class Invalid:
    """A message that is not valid JSON-RPC: the id to answer (if any) and why."""

    id: RequestId | None
    reason: str


Inbound: TypeAlias = Request | Notification | Response | Invalid


def _valid_id(value: JsonValue) -> bool:
    # bool is an int subclass in Python but not a JSON-RPC id; fractional numbers are
    # not allowed either (JSON-RPC 2.0 §4: "Numbers SHOULD NOT contain fractional parts").
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def classify(value: JsonValue) -> Inbound:
    """Turns one decoded JSON value into a message, or an `Invalid` with its reason."""
    if isinstance(value, list):
        return Invalid(None, "batch requests are not supported by ACP")
    if not isinstance(value, dict):
        return Invalid(None, "a JSON-RPC message must be a JSON object")
    raw_id = value.get("id")
    has_id = "id" in value
    answer_id = raw_id if has_id and _valid_id(raw_id) else None
    assert answer_id is None or isinstance(answer_id, int | str)
    if too_deep(value):  # ROBUST-DEPTH-001: nothing above has to follow deeper nesting
        return Invalid(answer_id, f"the message nests deeper than {MAX_DEPTH} levels")
    if value.get("jsonrpc") != "2.0":
        return Invalid(answer_id, 'the "jsonrpc" member must be exactly "2.0"')
    if "method" in value:
        method = value["method"]
        if not isinstance(method, str) or not method:
            return Invalid(answer_id, 'the "method" member must be a non-empty string')
        if has_id and answer_id is None:
            return Invalid(None, 'the "id" member must be a string or an integer')
        params = value.get("params")
        if "params" in value and not isinstance(params, dict | list):
            return Invalid(answer_id, 'the "params" member must be an object or an array')
        if answer_id is None:
            return Notification(method, params)
        return Request(answer_id, method, params)
    if "result" in value or "error" in value:
        if answer_id is None:
            return Invalid(None, "a response must carry the id of a request")
        if "result" in value and "error" in value:
            return Invalid(None, 'a response must not carry both "result" and "error"')
        error = value.get("error")
        if "error" in value and not isinstance(error, dict):
            return Invalid(None, 'the "error" member must be an object')
        return Response(answer_id, value.get("result"), error if isinstance(error, dict) else None)
    return Invalid(answer_id, 'a request must carry a "method" member')
