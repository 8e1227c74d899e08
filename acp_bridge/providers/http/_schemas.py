"""Tool parameter schemas as each provider's API takes them (sans-IO, MCP-SCHEMA-002).

Tools arrive with any JSON Schema object (MCP servers send what their SDK generates); MCP's
layer has already inlined local `$ref`s and dropped `$defs` (MCP-SCHEMA-001). What is left
that a provider rejects or ignores is translated here, per provider, and every keyword taken
out is named in the description of the schema it was in, so the model still reads the rule:

- OpenAI (Chat Completions, non-strict) and Anthropic reject `anyOf`, `oneOf`, `allOf`, `not`
  and `enum` at the top of the parameters (the schema must be a plain object schema);
- Gemini's `parametersJsonSchema` takes a documented subset of JSON Schema: type, format,
  title, description, enum, items, prefixItems, minItems, maxItems, minimum, maximum, anyOf,
  properties, additionalProperties, required, propertyOrdering (and nullable); `oneOf` is
  read as `anyOf`, `const` becomes a one-value `enum`, and everything else is dropped.

A translated schema is cached by the identity of the tool's schema (kept alive with it), so a
long session translates each tool once.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from acp_bridge._json import JsonObject

__all__ = ["for_anthropic", "for_gemini", "for_openai"]

_TOP_REJECTED = ("anyOf", "oneOf", "allOf", "not", "enum")
_GEMINI_KEPT = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "enum",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "anyOf",
        "properties",
        "additionalProperties",
        "required",
        "propertyOrdering",
        "nullable",
        "default",
    }
)
_SUBSCHEMA_MAPS = ("properties",)
_SUBSCHEMA = ("items", "additionalProperties")
_SUBSCHEMA_LISTS = ("anyOf", "prefixItems")
_CACHE: dict[tuple[str, int], tuple[JsonObject, JsonObject]] = {}
_CACHE_LIMIT = 512


def _noted(schema: dict[str, Any], dropped: dict[str, Any]) -> None:
    if not dropped:
        return
    rules = "; ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in dropped.items())
    note = f"(also: {rules})"
    text = schema.get("description")
    schema["description"] = f"{text} {note}" if isinstance(text, str) and text else note


def _top_level(schema: JsonObject) -> JsonObject:
    out = dict(schema)
    dropped = {k: out.pop(k) for k in _TOP_REJECTED if k in out}
    out["type"] = "object"
    _noted(out, dropped)
    return out


def _gemini(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    dropped: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "oneOf":
            key = "anyOf"
        if key == "const" and "enum" not in schema:
            out["enum"] = [value]
        elif key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _gemini(sub) for name, sub in value.items()}
        elif key in _SUBSCHEMA and isinstance(value, dict):
            out[key] = _gemini(value)
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [_gemini(sub) for sub in value]
        elif key in _GEMINI_KEPT:
            out[key] = value
        else:
            dropped[key] = value
    _noted(out, dropped)
    return out


def _cached(
    kind: str, schema: JsonObject, translate: Callable[[JsonObject], JsonObject]
) -> JsonObject:
    key = (kind, id(schema))
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is schema:
        return hit[1]
    if len(_CACHE) >= _CACHE_LIMIT:
        _CACHE.clear()
    out = translate(schema)
    _CACHE[key] = (schema, out)  # the source is kept alive, so its id is not reused
    return out


def for_openai(schema: JsonObject) -> JsonObject:
    return _cached("openai", schema, _top_level)


def for_anthropic(schema: JsonObject) -> JsonObject:
    return _cached("anthropic", schema, _top_level)


def for_gemini(schema: JsonObject) -> JsonObject:
    return _cached("gemini", schema, lambda s: _gemini(_top_level(s)))
