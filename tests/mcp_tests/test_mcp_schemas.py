"""Tool schemas translated per provider (MCP-SCHEMA-002): our SDK server's `price` tool has the
schema pydantic generates ($defs and $ref, anyOf with null, const, pattern, minimum/maximum);
each provider's real adapter sends it to a loopback server, and the captured body is checked
against what that provider's API takes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bridge import running_bridge, scripted_config
from daily.test_daily_instructions import PROVIDERS
from loopback_http import LoopbackServer
from mcp_tests.mcpkit import MCP_WAIT, fault_server

from acp_bridge.providers.http import HttpProviderOptions

pytestmark = pytest.mark.anyio

NAME = "mcp__faults__price"
GEMINI_KEYS = {
    "type", "format", "title", "description", "enum", "items", "prefixItems", "minItems",
    "maxItems", "minimum", "maximum", "anyOf", "properties", "additionalProperties",
    "required", "propertyOrdering", "nullable", "default",
}  # fmt: skip


def _offered(kind: str, body: dict[str, Any]) -> dict[str, Any]:
    if kind == "openai":
        tools = [t["function"] for t in body["tools"]]
        key = "parameters"
    elif kind == "anthropic":
        tools, key = body["tools"], "input_schema"
    else:
        tools, key = body["tools"][0]["functionDeclarations"], "parametersJsonSchema"
    (tool,) = [t for t in tools if t["name"] == NAME]
    schema: dict[str, Any] = tool[key]
    return schema


def _keys(schema: Any, path: str = "$") -> list[tuple[str, str]]:
    """(path, keyword) of every keyword of every subschema."""
    found: list[tuple[str, str]] = []
    if not isinstance(schema, dict):
        return found
    for key, value in schema.items():
        found.append((path, key))
        if key == "properties":
            for name, sub in value.items():
                found += _keys(sub, f"{path}.{name}")
        elif key in ("items", "additionalProperties"):
            found += _keys(value, f"{path}[]")
        elif key in ("anyOf", "oneOf", "allOf", "prefixItems"):
            for index, sub in enumerate(value):
                found += _keys(sub, f"{path}|{index}")
    return found


@pytest.mark.requirement("MCP-SCHEMA-002")
@pytest.mark.parametrize("kind", sorted(PROVIDERS))
async def test_a_pydantic_schema_reaches_each_provider_in_the_form_it_takes(
    tmp_path: Path, kind: str
) -> None:
    provider_type, answer = PROVIDERS[kind]
    async with LoopbackServer([answer()]) as server:
        options = HttpProviderOptions("m", base_url=server.base_url, api_key="k")
        config = scripted_config(tmp_path / "s", provider_type(options))
        async with running_bridge(config, wait=MCP_WAIT) as ed:
            await ed.initialize()
            servers = [fault_server(tmp_path / "calls.jsonl")]
            made = await ed.call("session/new", {"cwd": str(tmp_path), "mcpServers": servers})
            reply = await ed.prompt(made["sessionId"], "price two")
            assert reply["result"]["stopReason"] == "end_turn"
        schema = _offered(kind, server.requests[0].json())
    keys = _keys(schema)
    assert schema["type"] == "object"
    assert not {k for _, k in keys} & {"$ref", "$defs", "$schema"}  # inlined (MCP-SCHEMA-001)
    assert not set(schema) & {"anyOf", "oneOf", "allOf", "not", "enum"}  # a plain object
    item = schema["properties"]["items"]["items"]
    assert item["properties"]["qty"]["minimum"] == 1
    if kind == "gemini":
        assert {k for _, k in keys} <= GEMINI_KEYS, sorted({k for _, k in keys} - GEMINI_KEYS)
        sku = item["properties"]["sku"]
        assert "pattern" not in sku
        assert sku["description"] == 'Stock code (also: pattern: "^[A-Z]{3}-[0-9]+$")'
        assert schema["properties"]["speed"]["enum"] == ["fast"]  # const, as Gemini takes it
    else:
        assert item["properties"]["sku"]["pattern"] == "^[A-Z]{3}-[0-9]+$"  # kept as is


@pytest.mark.requirement("MCP-SCHEMA-002")
def test_top_level_combinators_are_taken_out_and_named_in_the_description() -> None:
    from acp_bridge.providers.http._schemas import for_anthropic, for_gemini, for_openai

    schema: dict[str, Any] = {
        "type": "object",
        "description": "Find a user.",
        "properties": {"id": {"type": "integer", "exclusiveMinimum": 0}, "email": {}},
        "anyOf": [{"required": ["id"]}, {"required": ["email"]}],
    }
    note = 'Find a user. (also: anyOf: [{"required": ["id"]}, {"required": ["email"]}])'
    for translate in (for_openai, for_anthropic):
        out = translate(schema)
        assert "anyOf" not in out
        assert out["description"] == note
        assert out["properties"]["id"]["exclusiveMinimum"] == 0  # inner keywords kept
        assert translate(schema) is out  # translated once per schema object
    gemini = for_gemini(schema)
    assert gemini["description"] == note
    assert gemini["properties"]["id"] == {
        "type": "integer",
        "description": "(also: exclusiveMinimum: 0)",
    }
    assert schema["anyOf"]  # the tool's own schema is left as it was
