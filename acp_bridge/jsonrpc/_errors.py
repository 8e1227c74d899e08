"""The one boundary where exceptions become JSON-RPC error objects.

What goes on the wire is deliberate: a `JsonRpcError` as given; a pydantic
`ValidationError` as -32602 with field locations only (never the offending input, which
could hold a secret, nor pydantic's URLs); anything else as a bare -32603 whose story goes to
the stderr log with its traceback.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.errors import INTERNAL_ERROR, INVALID_PARAMS, QUOTE_LIMIT, JsonRpcError, quote

if TYPE_CHECKING:
    import pydantic
    import pydantic_core

__all__ = ["error_object", "error_to_wire", "single_error", "validation_details"]

_log = logging.getLogger("acp_bridge.jsonrpc")


def error_object(code: int, message: str, data: JsonValue = None) -> JsonObject:
    error: JsonObject = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return error


# The longest problem text pydantic's own words take (its longest fixed message is well under
# it); anything longer holds input and is cut (ROBUST-ERR-001).
_PROBLEM_LIMIT = 4 * QUOTE_LIMIT


def validation_details(exc: pydantic.ValidationError) -> list[JsonValue]:
    """Where the params were wrong, and why, without echoing more than a bounded quote of the
    input: pydantic's message for a wrong discriminator carries the whole tag the peer sent, so
    that one is worded again around a quote of it, and any other overlong message is cut."""
    details: list[JsonValue] = []
    for item in exc.errors(include_url=False, include_input=False):
        location = ".".join(str(part) for part in item["loc"])
        details.append({"field": location or "(params)", "problem": _problem(item)})
    return details


def _problem(item: pydantic_core.ErrorDetails) -> str:
    context = item.get("ctx") or {}
    if item["type"] == "union_tag_invalid":
        return (
            f"Input tag {quote(context.get('tag', ''))} found using "
            f"{context.get('discriminator', '')} does not match any of the expected tags: "
            f"{context.get('expected_tags', '')}"
        )
    message = item["msg"]
    if len(message) <= _PROBLEM_LIMIT:
        return message
    return f"{message[:_PROBLEM_LIMIT]}... ({len(message)} characters)"


def error_to_wire(exc: BaseException, *, method: str | None = None) -> JsonObject:
    """Maps any exception raised by a handler to the error object the peer receives."""
    if isinstance(exc, JsonRpcError):
        return error_object(exc.code, exc.message, exc.data)
    if _is_validation_error(exc):
        assert isinstance(exc, _validation_error_type())
        return error_object(
            INVALID_PARAMS,
            f"Invalid params for {method}" if method else "Invalid params",
            {"errors": validation_details(exc)},
        )
    _log.error("internal error while handling %s", method or "a message", exc_info=exc)
    return error_object(INTERNAL_ERROR, "Internal error")


# pydantic is imported lazily: the `initialize` handshake is answered before it loads (cold
# start), and an exception can only be pydantic's once pydantic_core is imported.
def _validation_error_type() -> type[pydantic.ValidationError]:
    from pydantic import ValidationError

    return ValidationError


def _is_validation_error(exc: BaseException) -> bool:
    core = sys.modules.get("pydantic_core")
    return core is not None and isinstance(exc, core.ValidationError)


def single_error(exc: Exception) -> BaseException:
    """Unwraps exception groups of one, so a handler's inner task group keeps the real error."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        inner = exc.exceptions[0]
        if not isinstance(inner, Exception):
            break
        exc = inner
    return exc
