"""An MCP tool's input schema as the providers accept it (sans-IO, MCP-SCHEMA-001).

MCP servers send any JSON Schema object. The providers want a plain object schema: type
object with properties, no ``$ref``/``$defs`` (Gemini rejects them), no ``$schema``/``$id``.
`offered_schema` inlines local references (``#/$defs/X``, ``#/definitions/X``) up to a depth,
drops the meta keys, and raises `SchemaRejected` for a schema that is not an object schema
(the tool is then not offered, and the user is told).
"""

from __future__ import annotations

from typing import Any

from acp_bridge._json import JsonObject, JsonValue

__all__ = ["SchemaRejected", "offered_schema"]

_DROPPED = frozenset({"$schema", "$id", "$defs", "definitions", "$comment", "$anchor"})
_MAX_DEPTH = 8


class SchemaRejected(ValueError):
    """The server's input schema cannot be offered; the message says why."""


def offered_schema(schema: Any) -> JsonObject:
    if not isinstance(schema, dict):
        raise SchemaRejected("its inputSchema is not a JSON object")
    if schema.get("type", "object") != "object":
        raise SchemaRejected(f"its inputSchema has type {schema.get('type')!r}, not 'object'")
    defs: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        table = schema.get(key)
        if isinstance(table, dict):
            defs.update({f"#/{key}/{name}": value for name, value in table.items()})
    out = _inline(schema, defs, 0)
    assert isinstance(out, dict)
    out["type"] = "object"
    properties = out.get("properties")
    if properties is None:
        out["properties"] = {}
    elif not isinstance(properties, dict):
        raise SchemaRejected("its inputSchema's properties is not an object")
    required = out.get("required")
    if required is not None and not (
        isinstance(required, list) and all(isinstance(r, str) for r in required)
    ):
        raise SchemaRejected("its inputSchema's required is not a list of names")
    return out


def _inline(value: Any, defs: dict[str, Any], depth: int) -> JsonValue:
    if isinstance(value, list):
        return [_inline(item, defs, depth) for item in value]
    if not isinstance(value, dict):
        return value  # type: ignore[no-any-return]
    ref = value.get("$ref")
    if isinstance(ref, str):
        target = defs.get(ref)
        if target is None:
            raise SchemaRejected(f"its inputSchema refers to {ref!r}, which it does not define")
        if depth >= _MAX_DEPTH:
            return {}  # a recursive structure: anything is accepted below this depth
        merged = {**target, **{k: v for k, v in value.items() if k != "$ref"}}
        return _inline(merged, defs, depth + 1)
    return {k: _inline(v, defs, depth) for k, v in value.items() if k not in _DROPPED}
