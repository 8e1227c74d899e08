"""Specific wire behaviours of the ACP models: `_meta` isolation, omission of absent fields,
tags, lenient reading versus strict construction, and the untagged union members."""

from __future__ import annotations

from typing import Any

import pytest
from acp_schema import assert_matches_def
from pydantic import ValidationError

import acp_bridge.protocol as acp


def _locations(exc: ValidationError) -> list[tuple[Any, ...]]:
    return [tuple(error["loc"]) for error in exc.errors()]


# --- _meta ---------------------------------------------------------------------------------


@pytest.mark.requirement("PROTO-META-002")
def test_meta_cwd_does_not_replace_the_real_cwd() -> None:
    # Another implementation let `_meta: {"cwd": "/etc"}` replace `cwd`.
    params = {"cwd": "/home/u/project", "mcpServers": [], "_meta": {"cwd": "/etc"}}
    request = acp.from_wire(acp.NewSessionRequest, params)
    assert request.cwd == "/home/u/project"
    assert request.field_meta == {"cwd": "/etc"}


@pytest.mark.requirement("PROTO-META-002")
def test_meta_never_stands_in_for_a_missing_parameter() -> None:
    with pytest.raises(ValidationError) as caught:
        acp.from_wire(acp.NewSessionRequest, {"mcpServers": [], "_meta": {"cwd": "/etc"}})
    assert _locations(caught.value) == [("cwd",)]
    with pytest.raises(ValidationError):
        acp.from_wire(
            acp.PromptRequest, {"_meta": {"sessionId": "s1", "prompt": [], "session_id": "s1"}}
        )


@pytest.mark.requirement("PROTO-META-002")
def test_nested_meta_stays_with_its_own_type() -> None:
    params = {
        "sessionId": "s1",
        "prompt": [{"type": "text", "text": "hi", "_meta": {"text": "injected"}}],
        "_meta": {"prompt": [], "sessionId": "other"},
    }
    request = acp.from_wire(acp.PromptRequest, params)
    assert request.session_id == "s1"
    block = request.prompt[0]
    assert isinstance(block, acp.TextContent)
    assert (block.text, block.field_meta) == ("hi", {"text": "injected"})


@pytest.mark.requirement("PROTO-META-001")
def test_malformed_meta_from_the_wire_is_dropped_but_rejected_in_python() -> None:
    read = acp.from_wire(acp.CancelNotification, {"sessionId": "s1", "_meta": "not an object"})
    assert read.field_meta is None
    with pytest.raises(ValidationError):
        acp.CancelNotification(session_id="s1", field_meta="not an object")  # type: ignore[arg-type]


# --- what goes on the wire -----------------------------------------------------------------


@pytest.mark.requirement("PROTO-ROOT-001")
def test_absent_optional_fields_are_omitted_and_tags_always_sent() -> None:
    call = acp.ToolCall(tool_call_id="call-1", title="Read a.py")
    assert acp.to_wire(call) == {
        "sessionUpdate": "tool_call",
        "toolCallId": "call-1",
        "title": "Read a.py",
    }
    assert acp.to_wire(acp.TextContent(text="x")) == {"type": "text", "text": "x"}
    assert acp.to_wire(acp.InitializeResponse(protocol_version=1)) == {"protocolVersion": 1}


def test_an_explicit_none_is_sent_as_null() -> None:
    # session_info_update: null clears the title, absent leaves it unchanged.
    cleared = acp.to_wire(acp.SessionInfoUpdate(title=None))
    assert cleared == {"sessionUpdate": "session_info_update", "title": None}
    assert_matches_def("SessionUpdate", cleared, strict_roots=True)
    assert acp.to_wire(acp.SessionInfoUpdate()) == {"sessionUpdate": "session_info_update"}


@pytest.mark.requirement("PROTO-CAMEL-001")
def test_a_session_update_on_the_wire() -> None:
    update = acp.SessionNotification(
        session_id="s1",
        update=acp.AgentMessageChunk(
            content=acp.TextContent(text="Hel"),
            message_id="m-2",
            field_meta={"acp-bridge/reset": True},
        ),
    )
    assert acp.to_wire(update) == {
        "sessionId": "s1",
        "update": {
            "_meta": {"acp-bridge/reset": True},
            "content": {"type": "text", "text": "Hel"},
            "messageId": "m-2",
            "sessionUpdate": "agent_message_chunk",
        },
    }


def test_the_python_side_uses_snake_case_and_the_wire_side_only_camel_case() -> None:
    assert acp.ReadTextFileRequest(session_id="s", path="/a").session_id == "s"
    with pytest.raises(ValidationError) as caught:
        acp.from_wire(acp.ReadTextFileRequest, {"session_id": "s", "path": "/a"})
    assert _locations(caught.value) == [("sessionId",)]


def test_models_are_immutable_values() -> None:
    request = acp.CancelNotification(session_id="s1")
    with pytest.raises(ValidationError):
        request.session_id = "s2"  # type: ignore[misc]
    assert request == acp.from_wire(acp.CancelNotification, {"sessionId": "s1"})


# --- lenient reading, strict construction --------------------------------------------------


@pytest.mark.requirement("PROTO-LENIENT-001")
def test_malformed_optional_capabilities_read_as_their_defaults() -> None:
    params = {
        "protocolVersion": 1,
        "clientCapabilities": {
            "fs": 5,
            "terminal": "yes",
            "session": [],
            "auth": {"terminal": True},
        },
        "clientInfo": {"name": "zed", "version": "1", "title": 42},
    }
    request = acp.from_wire(acp.InitializeRequest, params)
    caps = request.client_capabilities
    assert caps.fs == acp.FileSystemCapabilities()
    assert (caps.terminal, caps.session, caps.auth.terminal) == (False, None, True)
    assert request.client_info == acp.Implementation(name="zed", version="1")
    with pytest.raises(ValidationError):
        acp.ClientCapabilities(terminal="yes")  # type: ignore[arg-type]


@pytest.mark.requirement("PROTO-LENIENT-001")
def test_invalid_list_items_are_skipped_when_reading() -> None:
    update = acp.from_wire(
        acp.SESSION_UPDATE,
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "c1",
            "content": [{"type": "diff", "path": "/a", "newText": "x"}, {"type": "hologram"}],
            "locations": "nowhere",
        },
    )
    assert isinstance(update, acp.ToolCallProgress)
    assert update.content == [acp.ToolCallDiff(path="/a", new_text="x")]
    assert update.locations is None
    sessions = acp.from_wire(acp.ListSessionsResponse, {"sessions": "garbage"})
    assert sessions.sessions == []


@pytest.mark.requirement("PROTO-LENIENT-001")
def test_null_arrays_read_as_empty() -> None:
    request = acp.from_wire(acp.NewSessionRequest, {"cwd": "/p", "mcpServers": None})
    assert request.mcp_servers == []
    terminal = acp.from_wire(
        acp.CreateTerminalRequest, {"sessionId": "s", "command": "ls", "args": None, "env": None}
    )
    assert (terminal.args, terminal.env) == ([], [])


def test_required_fields_are_still_required_on_the_wire() -> None:
    with pytest.raises(ValidationError) as caught:
        acp.from_wire(acp.PromptRequest, {"sessionId": "s1"})
    assert _locations(caught.value) == [("prompt",)]
    with pytest.raises(ValidationError) as caught:
        acp.from_wire(acp.NewSessionRequest, {"cwd": "/p"})
    assert _locations(caught.value) == [("mcpServers",)]


def test_absent_params_read_as_an_empty_object() -> None:
    assert acp.from_wire(acp.ListSessionsRequest, None) == acp.ListSessionsRequest()
    assert acp.from_wire(acp.LogoutRequest, None) == acp.LogoutRequest()


@pytest.mark.requirement("PROTO-VERSION-001")
@pytest.mark.parametrize("version", ["1", "1.0.0", True, 1.0, -1, 65536, None])
def test_protocol_version_must_be_a_uint16_integer(version: object) -> None:
    with pytest.raises(ValidationError):
        acp.from_wire(acp.InitializeRequest, {"protocolVersion": version})


@pytest.mark.requirement("PROTO-VERSION-001")
def test_protocol_version_one() -> None:
    request = acp.from_wire(acp.InitializeRequest, {"protocolVersion": acp.PROTOCOL_VERSION})
    assert request.protocol_version == 1
    assert request.client_capabilities == acp.ClientCapabilities()


# --- unions --------------------------------------------------------------------------------


def test_stdio_mcp_servers_carry_no_type() -> None:
    stdio = {"name": "fs", "command": "/bin/mcp", "args": [], "env": []}
    assert isinstance(acp.from_wire(acp.MCP_SERVER, stdio), acp.McpServerStdio)
    explicit = acp.from_wire(acp.MCP_SERVER, {**stdio, "type": "stdio"})
    assert acp.to_wire(explicit) == stdio
    http = acp.from_wire(acp.MCP_SERVER, {"type": "http", "name": "w", "url": "u", "headers": []})
    assert isinstance(http, acp.McpServerHttp)
    with pytest.raises(ValidationError):
        acp.from_wire(acp.MCP_SERVER, {"type": "carrier-pigeon", "name": "x"})


def test_agent_auth_methods_carry_no_type() -> None:
    agent = acp.from_wire(acp.AUTH_METHOD, {"id": "login", "name": "Log in"})
    assert isinstance(agent, acp.AuthMethodAgent)
    assert acp.to_wire(agent) == {"id": "login", "name": "Log in"}
    terminal = acp.from_wire(acp.AUTH_METHOD, {"type": "terminal", "id": "t", "name": "T"})
    assert isinstance(terminal, acp.AuthMethodTerminal)
    response = acp.from_wire(
        acp.InitializeResponse,
        {"protocolVersion": 1, "authMethods": [{"id": "a", "name": "A"}, {"type": "future"}]},
    )
    assert response.auth_methods == [acp.AuthMethodAgent(id="a", name="A")]


def test_embedded_resources_are_text_or_blob() -> None:
    text = acp.from_wire(
        acp.CONTENT_BLOCK, {"type": "resource", "resource": {"uri": "u", "text": "t"}}
    )
    blob = acp.from_wire(
        acp.CONTENT_BLOCK, {"type": "resource", "resource": {"uri": "u", "blob": "AA=="}}
    )
    assert isinstance(text, acp.EmbeddedResource)
    assert isinstance(text.resource, acp.TextResourceContents)
    assert isinstance(blob, acp.EmbeddedResource)
    assert isinstance(blob.resource, acp.BlobResourceContents)


def test_select_options_are_flat_or_grouped() -> None:
    base = {"type": "select", "id": "m", "name": "Model", "currentValue": "a"}
    flat = acp.from_wire(
        acp.SESSION_CONFIG_OPTION, {**base, "options": [{"value": "a", "name": "A"}]}
    )
    grouped = acp.from_wire(
        acp.SESSION_CONFIG_OPTION,
        {
            **base,
            "options": [{"group": "g", "name": "G", "options": [{"value": "a", "name": "A"}]}],
        },
    )
    assert isinstance(flat, acp.SessionConfigSelect)
    assert isinstance(grouped, acp.SessionConfigSelect)
    assert isinstance(flat.options[0], acp.SessionConfigSelectOption)
    assert isinstance(grouped.options[0], acp.SessionConfigSelectGroup)


@pytest.mark.parametrize(
    ("params", "we_accept", "schema_accepts"),
    [
        ({"value": "fast"}, True, True),
        ({"type": "boolean", "value": True}, True, True),
        ({"value": True}, False, False),
        ({"value": 1}, False, False),
        # The schema reads this as a value id with an undeclared `type`; a client that says
        # boolean and sends a string is confused, so the bridge answers -32602.
        ({"type": "boolean", "value": "true"}, False, True),
    ],
)
def test_config_option_values_match_their_type(
    params: dict[str, Any], we_accept: bool, schema_accepts: bool
) -> None:
    wire = {"sessionId": "s", "configId": "c", **params}
    try:
        acp.from_wire(acp.SetSessionConfigOptionRequest, wire)
        accepted = True
    except ValidationError:
        accepted = False
    try:
        assert_matches_def("SetSessionConfigOptionRequest", wire)
        valid = True
    except AssertionError:
        valid = False
    assert (accepted, valid) == (we_accept, schema_accepts)


def test_permission_outcomes() -> None:
    selected = acp.from_wire(
        acp.RequestPermissionResponse, {"outcome": {"outcome": "selected", "optionId": "allow"}}
    )
    cancelled = acp.from_wire(acp.RequestPermissionResponse, {"outcome": {"outcome": "cancelled"}})
    assert selected.outcome == acp.SelectedPermissionOutcome(option_id="allow")
    assert isinstance(cancelled.outcome, acp.CancelledPermissionOutcome)


def test_cancel_request_ids_keep_their_json_type() -> None:
    as_int = acp.from_wire(acp.CancelRequestNotification, {"requestId": 1})
    as_str = acp.from_wire(acp.CancelRequestNotification, {"requestId": "1"})
    assert (as_int.request_id, as_str.request_id) == (1, "1")
    with pytest.raises(ValidationError):
        acp.from_wire(acp.CancelRequestNotification, {})
