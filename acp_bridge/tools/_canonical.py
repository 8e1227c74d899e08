"""Arguments as the tool reads them: one form per action, for effect keys (EFFECT-CANON-001).

Two generations that ask for the same action spell it differently: one leaves out an
optional argument, the other spells out its default; one writes `120`, the other `120.0`; one
adds a key the tool never reads. `canonical_arguments(arguments, schema)` maps every spelling
of one action to one value, using only the tool's JSON Schema (so it serves any tool, MCP
tools included, keyed by their `inputSchema`):

- a property that is absent, or null where its schema does not allow null, takes the schema's
  `default` when it has one (and stays absent otherwise);
- a property the schema does not declare is dropped when the tool cannot read it: the schema
  says it takes no others (`additionalProperties: false`), or the tool says it ignores them
  (`ignore_unknown=True`; the built-in tools do, `Tool.ignores_unknown_arguments`);
- an integral number where the schema asks for an `integer` is an int (`120.0` -> `120`);
- nested objects (`properties`) and arrays of them (`items`) follow the same rules.

Everything else is kept as given. Strings and numbers are then normalised by the canonical JSON
of the key (EFFECT-002, EFFECT-003: NFC strings, integral doubles as integers). Different
actions never collide: two argument objects that differ in anything the schema lets the tool
read keep differing.
"""

from __future__ import annotations

import math
from typing import Any

from acp_bridge._json import JsonObject, JsonValue

__all__ = ["canonical_arguments"]


def canonical_arguments(
    arguments: JsonObject, schema: JsonObject, *, ignore_unknown: bool = False
) -> JsonObject:
    """The canonical form of `arguments` under the tool's parameter `schema`; with
    `ignore_unknown`, top-level keys the schema does not declare are dropped."""
    return _object(arguments, schema, ignore_unknown)


def _types(schema: Any) -> set[str]:
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    return set()


def _object(value: JsonObject, schema: Any, ignore_unknown: bool = False) -> JsonObject:
    if not isinstance(schema, dict):
        return value
    properties = schema.get("properties")
    declared: dict[str, Any] = properties if isinstance(properties, dict) else {}
    closed = ignore_unknown or schema.get("additionalProperties") is False
    out: JsonObject = {}
    for key, item in value.items():
        sub = declared.get(key)
        if sub is None:
            if not closed:
                out[key] = item
            continue
        if item is None and "null" not in _types(sub) and isinstance(sub, dict):
            continue  # read as absent: the default (if any) is filled in below
        out[key] = _value(item, sub)
    for key, sub in declared.items():
        if key not in out and isinstance(sub, dict) and "default" in sub:
            out[key] = _value(sub["default"], sub)
    return out


def _value(value: JsonValue, schema: Any) -> JsonValue:
    if isinstance(value, dict):
        return _object(value, schema)
    if isinstance(value, list):
        items = schema.get("items") if isinstance(schema, dict) else None
        return [_value(item, items) for item in value] if isinstance(items, dict) else value
    if (
        isinstance(value, float)
        and "integer" in _types(schema)
        and math.isfinite(value)
        and value.is_integer()
    ):
        return int(value)
    return value
