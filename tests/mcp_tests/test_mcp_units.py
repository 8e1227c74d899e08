"""The sans-IO parts of the MCP layer: names, schemas, results, permission scopes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_bridge.errors import ToolError
from acp_bridge.mcp import (
    MAX_TOOL_NAME,
    McpTool,
    McpToolInfo,
    SchemaRejected,
    offered_name,
    offered_schema,
    result_outcome,
)
from acp_bridge.tools import ToolContext, ToolKind
from acp_bridge.turn import PermissionMemory, SessionMode
from acp_bridge.turn._permission import PermissionGate, permission_options
from acp_bridge.turn._updates import PermissionDecision

PROVIDER_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")


@pytest.mark.requirement("MCP-NAME-001")
def test_plain_names_are_kept_and_others_are_sanitised_and_hashed() -> None:
    assert offered_name("time", "get_current_time") == "mcp__time__get_current_time"
    dotted = offered_name("my.server", "read file")
    assert PROVIDER_NAME.fullmatch(dotted)
    assert dotted.startswith("mcp__my_server__read_file_")
    long = offered_name("s" * 40, "t" * 40)
    assert len(long) == MAX_TOOL_NAME
    assert PROVIDER_NAME.fullmatch(long)


@pytest.mark.requirement("MCP-NAME-001")
@pytest.mark.requirement("MCP-NAME-002")
@given(st.text(max_size=70), st.text(max_size=70), st.text(max_size=70), st.text(max_size=70))
def test_names_fit_every_provider_and_never_collide(s1: str, t1: str, s2: str, t2: str) -> None:
    one, two = offered_name(s1, t1), offered_name(s2, t2)
    assert PROVIDER_NAME.fullmatch(one)
    assert PROVIDER_NAME.fullmatch(two)
    assert offered_name(s1, t1) == one  # deterministic
    if (s1, t1) != (s2, t2):
        assert one != two


@pytest.mark.requirement("MCP-NAME-002")
def test_server_names_that_could_read_alike_are_hashed() -> None:
    assert offered_name("a__b", "c") != offered_name("a", "b__c")


@pytest.mark.requirement("MCP-SCHEMA-001")
def test_schemas_are_inlined_and_cleaned_for_the_providers() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"where": {"$ref": "#/$defs/Place"}},
        "required": ["where"],
        "$defs": {"Place": {"type": "object", "properties": {"city": {"type": "string"}}}},
    }
    assert offered_schema(schema) == {
        "type": "object",
        "properties": {"where": {"type": "object", "properties": {"city": {"type": "string"}}}},
        "required": ["where"],
    }
    assert offered_schema({}) == {"type": "object", "properties": {}}
    recursive = {
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/N"}},
        "$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}},
    }
    assert "$ref" not in str(offered_schema(recursive))
    for bad in ([], {"type": "string"}, {"properties": []}, {"properties": {"x": {"$ref": "#/x"}}}):
        with pytest.raises(SchemaRejected):
            offered_schema(bad)


@pytest.mark.requirement("MCP-RESULT-001")
def test_every_content_kind_becomes_text() -> None:
    result = {
        "content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "body"}},
            {"type": "resource", "resource": {"uri": "file:///b", "blob": "AAAAAAAA"}},
            {"type": "resource_link", "uri": "file:///c", "name": "c"},
        ]
    }
    outcome = result_outcome("srv: tool", result, 1000)
    assert outcome.ok
    assert outcome.for_model.splitlines() == [
        "hello",
        "[image image/png, 3 bytes]",
        "[resource file:///a.txt]",
        "body",
        "[resource file:///b (application/octet-stream), 6 bytes]",
        "[resource link file:///c: c]",
    ]
    structured = result_outcome("srv: tool", {"content": [], "structuredContent": {"a": 1}}, 100)
    assert '"a": 1' in structured.for_model


@pytest.mark.requirement("MCP-RESULT-002")
def test_is_error_fails_the_call_with_the_servers_message() -> None:
    result = {"content": [{"type": "text", "text": "no such order"}], "isError": True}
    outcome = result_outcome("shop: refund", result, 1000)
    assert not outcome.ok
    assert outcome.for_model == "shop: refund failed: no such order"


@pytest.mark.requirement("MCP-RESULT-003")
def test_large_results_are_cut_for_the_model_with_a_marker() -> None:
    outcome = result_outcome("s: t", {"content": [{"type": "text", "text": "x" * 5000}]}, 1000)
    assert len(outcome.for_model) < 1100
    assert outcome.for_model.endswith("[... 4000 more bytes truncated ...]")
    assert outcome.content[0].text == "x" * 5000  # type: ignore[union-attr]


class _NoCalls:
    async def call_tool(self, tool: str, arguments: object) -> object:
        raise AssertionError("not called")


def _tool(read_only: bool) -> McpTool:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    info = McpToolInfo(
        "shop",
        "refund",
        offered_name("shop", "refund"),
        "refund",
        "Refund.",
        schema,
        schema,
        read_only,
    )
    return McpTool(info, _NoCalls(), 1000)


class _Sink:
    def __init__(self, option_id: str) -> None:
        self.option_id = option_id
        self.asked = 0

    async def request_permission(self, call: object, options: object) -> PermissionDecision:
        self.asked += 1
        return PermissionDecision(self.option_id)


@pytest.mark.anyio
@pytest.mark.requirement("MCP-PERM-001")
async def test_allow_always_for_a_whole_server_covers_its_other_tools(tmp_path: object) -> None:
    from pathlib import Path

    ctx = ToolContext("s", Path("/"), (Path("/"),))
    tool = _tool(read_only=False)
    preview = await tool.preview({"n": 1}, ctx)
    ids = [o.option_id for o in permission_options(tool, preview)]
    assert ids == [
        "allow-once",
        "allow-always",
        "allow-always-group",
        "reject-once",
        "reject-always",
    ]
    memory = PermissionMemory()
    sink = _Sink("allow-always-group")
    gate = PermissionGate(sink, memory, SessionMode.ASK)  # type: ignore[arg-type]
    assert (await gate.decide(None, tool, preview)).asked  # type: ignore[arg-type]
    other = McpTool(
        McpToolInfo("shop", "cancel", offered_name("shop", "cancel"), "cancel", "", {}, {}, False),
        _NoCalls(),
        1000,
    )
    other_preview = await other.preview({}, ctx)
    decision = await gate.decide(None, other, other_preview)  # type: ignore[arg-type]
    assert decision.remembered
    assert not decision.asked
    assert sink.asked == 1
    memory.remember(other.name, other.name, allow=False)  # a per-tool rejection wins
    decision = await gate.decide(None, other, other_preview)  # type: ignore[arg-type]
    assert decision.verdict.value == "rejected"


@pytest.mark.anyio
@pytest.mark.requirement("MCP-MODE-001")
@pytest.mark.requirement("MCP-TOOL-001")
async def test_read_only_mode_offers_only_read_only_annotated_tools() -> None:
    from pathlib import Path

    gate = PermissionGate(_Sink("x"), PermissionMemory(), SessionMode.READ_ONLY)  # type: ignore[arg-type]
    assert gate.offers(_tool(read_only=True))
    assert not gate.offers(_tool(read_only=False))
    assert _tool(read_only=True).kind is ToolKind.READ
    assert _tool(read_only=False).kind is ToolKind.OTHER
    from acp_bridge.errors import ToolError

    with pytest.raises(ToolError, match="n"):
        await _tool(False).preview({"n": "one"}, ToolContext("s", Path("/"), (Path("/"),)))


class _Answers:
    def __init__(self, result: object) -> None:
        self.result = result

    async def call_tool(self, tool: str, arguments: object) -> object:
        return self.result


@pytest.mark.requirement("MCP-MALFORMED-001")
@pytest.mark.anyio
@pytest.mark.parametrize(
    "result",
    [
        "not an object",
        {"content": "not a list"},
        {"content": [7]},
        {"content": [{"type": "text"}]},
        {"content": [{"type": "resource", "resource": {"text": "no uri"}}]},
    ],
)
async def test_a_malformed_result_fails_the_call_as_one_that_may_have_acted(result: object) -> None:
    info = McpToolInfo("shop", "refund", "mcp__shop__refund", "refund", "", {}, {}, False)
    with pytest.raises(ToolError, match="shop: refund returned a malformed result") as raised:
        await McpTool(info, _Answers(result), 1000).run({}, ToolContext("s", Path("/"), ()))
    assert raised.value.may_have_changed is True  # final: never run again (EFFECT-FINAL-001)


@pytest.mark.requirement("MCP-DOCTOR-001")
def test_doctor_says_what_it_checks_of_mcp(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata
    import importlib.util

    from acp_bridge.cli._doctor import _mcp

    (check,) = _mcp(None)  # type: ignore[arg-type]  # settings are not read
    assert check.ok
    version = importlib.metadata.version("mcp")
    assert check.render() == (
        f"ok    mcp: MCP SDK {version} installed; the servers are the ones your editor passes "
        "for each session (mcpServers), so there are none to check here"
    )
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else real(name, *a)
    )
    (missing,) = _mcp(None)  # type: ignore[arg-type]
    assert not missing.ok
    assert "reinstall acp-bridge-agent (it depends on mcp)" in missing.line
