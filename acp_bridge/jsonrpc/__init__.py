"""JSON-RPC 2.0 layer: envelopes, ids, correlation, cancellation, error mapping.

It knows nothing of ACP: methods are strings and params are JSON values.
"""

from acp_bridge.jsonrpc._codes import (
    AUTH_REQUIRED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    RESOURCE_NOT_FOUND,
)
from acp_bridge.jsonrpc._envelope import (
    Inbound,
    Invalid,
    Notification,
    Request,
    RequestId,
    Response,
    classify,
)
from acp_bridge.jsonrpc._errors import error_object, error_to_wire, validation_details
from acp_bridge.jsonrpc._handler import (
    CANCEL_REQUEST,
    EncodedResult,
    Handler,
    Reply,
    RequestObserver,
    Tracer,
    current_request_id,
)
from acp_bridge.jsonrpc._peer import JsonRpcPeer

__all__ = [
    "AUTH_REQUIRED",
    "CANCEL_REQUEST",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "RESOURCE_NOT_FOUND",
    "EncodedResult",
    "Handler",
    "Inbound",
    "Invalid",
    "JsonRpcPeer",
    "Notification",
    "Reply",
    "Request",
    "RequestId",
    "RequestObserver",
    "Response",
    "Tracer",
    "classify",
    "current_request_id",
    "error_object",
    "error_to_wire",
    "validation_details",
]
