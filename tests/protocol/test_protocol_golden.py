"""Golden tests: every ACP model, built with every field set, serialises to exactly a shape
the official schema accepts, declares exactly the schema's fields, and round-trips.

Each sample is (model instance, the def its wire form must match). Union members are
checked against the union def, so their tags are checked too. The field-by-field checks
compare each model with the schema itself: property names, required keys, nullability and
the lenient-decoding hints (`x-deserialize-*`).
"""

from __future__ import annotations

from typing import Any

import pytest
from acp_schema import assert_matches_def, object_shape
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import acp_bridge.protocol as acp
from acp_bridge.protocol._base import (
    DefaultOnError,
    EmptyOnError,
    NullAsEmpty,
    NullAsEmptyObject,
    SkipInvalidItems,
)

META: dict[str, Any] = {"acp-bridge.test/sample": True, "traceparent": "00-01-02-01"}


def _samples() -> list[tuple[acp.AcpModel, str]]:
    m = dict(field_meta=META)
    annotations = acp.Annotations(
        audience=[acp.Role.USER, acp.Role.ASSISTANT], last_modified="2026-01-01", priority=0.5, **m
    )
    text = acp.TextContent(text="hello", annotations=annotations, **m)
    text_resource = acp.TextResourceContents(
        uri="file:///p/a.py", text="print(1)", mime_type="text/x-python", **m
    )
    blob_resource = acp.BlobResourceContents(
        uri="file:///p/a.png", blob="iVBORw0=", mime_type="image/png", **m
    )
    location = acp.ToolCallLocation(path="/p/a.py", line=3, **m)
    diff = acp.ToolCallDiff(path="/p/a.py", old_text="a", new_text="b", **m)
    terminal = acp.ToolCallTerminal(terminal_id="term-1", **m)
    block = acp.ToolCallContentBlock(content=text, **m)
    marker = acp.CapabilityMarker(**m)
    implementation = acp.Implementation(name="acp-bridge", title="ACP Bridge", version="1", **m)
    env = acp.EnvVariable(name="A", value="1", **m)
    header = acp.HttpHeader(name="Authorization", value="Bearer x", **m)
    stdio = acp.McpServerStdio(name="fs", command="/bin/mcp", args=["--x"], env=[env], **m)
    http = acp.McpServerHttp(name="web", url="https://mcp.example", headers=[header], **m)
    sse = acp.McpServerSse(name="old", url="https://mcp.example/sse", headers=[header], **m)
    mode = acp.SessionMode(id="ask", name="Ask", description="Asks first", **m)
    modes = acp.SessionModeState(current_mode_id="ask", available_modes=[mode], **m)
    option = acp.SessionConfigSelectOption(value="fast", name="Fast", description="quick", **m)
    group = acp.SessionConfigSelectGroup(group="g", name="Group", options=[option], **m)
    select = acp.SessionConfigSelect(
        id="model",
        name="Model",
        description="which model",
        category="model",
        current_value="fast",
        options=[option],
        **m,
    )
    grouped = select.model_copy(update={"options": [group]})
    boolean = acp.SessionConfigBoolean(
        id="think", name="Think", description="d", category="_custom", current_value=True, **m
    )
    tool_update = acp.ToolCallUpdate(
        tool_call_id="call-1",
        title="Edit a.py",
        name="edit_file",
        kind=acp.ToolKind.EDIT,
        status=acp.ToolCallStatus.PENDING,
        content=[diff, terminal, block],
        locations=[location],
        raw_input={"path": "/p/a.py"},
        raw_output={"ok": True},
        **m,
    )
    permission_option = acp.PermissionOption(
        option_id="allow", name="Allow once", kind=acp.PermissionOptionKind.ALLOW_ONCE, **m
    )
    exit_status = acp.TerminalExitStatus(exit_code=0, signal="SIGTERM", **m)
    entry = acp.PlanEntry(
        content="step",
        priority=acp.PlanEntryPriority.HIGH,
        status=acp.PlanEntryStatus.IN_PROGRESS,
        **m,
    )
    command = acp.AvailableCommand(
        name="retry",
        description="a broken stream",
        input=acp.UnstructuredCommandInput(hint="script name", **m),
        **m,
    )
    info = acp.SessionInfo(
        session_id="s1",
        cwd="/p",
        additional_directories=["/q"],
        title="t",
        updated_at="2026-01-01T00:00:00Z",
        **m,
    )
    client_caps = acp.ClientCapabilities(
        fs=acp.FileSystemCapabilities(read_text_file=True, write_text_file=True, **m),
        terminal=True,
        session=acp.ClientSessionCapabilities(
            compaction=marker,
            config_options=acp.SessionConfigOptionsCapabilities(boolean=marker, **m),
            notices=marker,
            **m,
        ),
        auth=acp.AuthCapabilities(terminal=True, **m),
        elicitation=acp.ElicitationCapabilities(form=marker, url=marker, **m),
        **m,
    )
    agent_caps = acp.AgentCapabilities(
        load_session=True,
        prompt_capabilities=acp.PromptCapabilities(
            image=True, audio=True, embedded_context=True, **m
        ),
        mcp_capabilities=acp.McpCapabilities(http=True, sse=False, **m),
        session_capabilities=acp.SessionCapabilities(
            list=marker,
            delete=marker,
            additional_directories=marker,
            resume=marker,
            close=marker,
            **m,
        ),
        auth=acp.AgentAuthCapabilities(logout=marker, **m),
        **m,
    )
    agent_auth = acp.AuthMethodAgent(id="login", name="Log in", description="d", **m)
    terminal_auth = acp.AuthMethodTerminal(
        id="tui", name="TUI", description="d", args=["--login"], env={"X": "1"}, **m
    )
    chunk = dict(content=text, message_id="msg-1", **m)
    return [
        (annotations, "Annotations"),
        (text, "ContentBlock"),
        (
            acp.ImageContent(data="AA==", mime_type="image/png", uri="file:///i", **m),
            "ContentBlock",
        ),
        (
            acp.AudioContent(data="AA==", mime_type="audio/wav", annotations=annotations, **m),
            "ContentBlock",
        ),
        (
            acp.ResourceLink(
                uri="file:///p/a.py",
                name="a.py",
                title="A",
                description="d",
                mime_type="text/plain",
                size=12,
                annotations=annotations,
                **m,
            ),
            "ContentBlock",
        ),
        (
            acp.EmbeddedResource(resource=text_resource, annotations=annotations, **m),
            "ContentBlock",
        ),
        (acp.EmbeddedResource(resource=blob_resource, **m), "ContentBlock"),
        (text_resource, "TextResourceContents"),
        (blob_resource, "BlobResourceContents"),
        (block, "ToolCallContent"),
        (diff, "ToolCallContent"),
        (terminal, "ToolCallContent"),
        (location, "ToolCallLocation"),
        (tool_update, "ToolCallUpdate"),
        (acp.ToolCallProgress(**tool_update.model_dump()), "SessionUpdate"),
        (
            acp.ToolCall(
                tool_call_id="call-1",
                title="Read a.py",
                name="read_file",
                kind=acp.ToolKind.SWITCH_MODE,
                status=acp.ToolCallStatus.IN_PROGRESS,
                content=[block],
                locations=[location],
                raw_input={"path": "/p/a.py"},
                raw_output="text",
                **m,
            ),
            "SessionUpdate",
        ),
        (marker, "SessionListCapabilities"),
        (client_caps, "ClientCapabilities"),
        (client_caps.fs, "FileSystemCapabilities"),
        (client_caps.auth, "AuthCapabilities"),
        (client_caps.session, "ClientSessionCapabilities"),
        (client_caps.elicitation, "ElicitationCapabilities"),
        (client_caps.session.config_options, "SessionConfigOptionsCapabilities"),  # type: ignore[union-attr]
        (agent_caps, "AgentCapabilities"),
        (agent_caps.prompt_capabilities, "PromptCapabilities"),
        (agent_caps.mcp_capabilities, "McpCapabilities"),
        (agent_caps.session_capabilities, "SessionCapabilities"),
        (agent_caps.auth, "AgentAuthCapabilities"),
        (implementation, "Implementation"),
        (agent_auth, "AuthMethod"),
        (terminal_auth, "AuthMethod"),
        (
            acp.InitializeRequest(
                protocol_version=1,
                client_capabilities=client_caps,
                client_info=implementation,
                **m,
            ),
            "InitializeRequest",
        ),
        (
            acp.InitializeResponse(
                protocol_version=1,
                agent_capabilities=agent_caps,
                auth_methods=[agent_auth, terminal_auth],
                agent_info=implementation,
                **m,
            ),
            "InitializeResponse",
        ),
        (acp.AuthenticateRequest(method_id="login", **m), "AuthenticateRequest"),
        (acp.AuthenticateResponse(**m), "AuthenticateResponse"),
        (acp.LogoutRequest(**m), "LogoutRequest"),
        (acp.LogoutResponse(**m), "LogoutResponse"),
        (env, "EnvVariable"),
        (header, "HttpHeader"),
        (stdio, "McpServer"),
        (http, "McpServer"),
        (sse, "McpServer"),
        (
            acp.NewSessionRequest(
                cwd="/p", additional_directories=["/q"], mcp_servers=[stdio, http, sse], **m
            ),
            "NewSessionRequest",
        ),
        (
            acp.NewSessionResponse(
                session_id="s1", modes=modes, config_options=[select, boolean], **m
            ),
            "NewSessionResponse",
        ),
        (
            acp.LoadSessionRequest(
                session_id="s1", cwd="/p", additional_directories=["/q"], mcp_servers=[stdio], **m
            ),
            "LoadSessionRequest",
        ),
        (
            acp.LoadSessionResponse(modes=modes, config_options=[grouped], **m),
            "LoadSessionResponse",
        ),
        (
            acp.ResumeSessionRequest(
                session_id="s1", cwd="/p", additional_directories=["/q"], mcp_servers=[http], **m
            ),
            "ResumeSessionRequest",
        ),
        (
            acp.ResumeSessionResponse(modes=modes, config_options=[boolean], **m),
            "ResumeSessionResponse",
        ),
        (acp.ListSessionsRequest(cwd="/p", cursor="c1", **m), "ListSessionsRequest"),
        (acp.ListSessionsResponse(sessions=[info], next_cursor="c2", **m), "ListSessionsResponse"),
        (info, "SessionInfo"),
        (acp.CloseSessionRequest(session_id="s1", **m), "CloseSessionRequest"),
        (acp.CloseSessionResponse(**m), "CloseSessionResponse"),
        (acp.DeleteSessionRequest(session_id="s1", **m), "DeleteSessionRequest"),
        (acp.DeleteSessionResponse(**m), "DeleteSessionResponse"),
        (mode, "SessionMode"),
        (modes, "SessionModeState"),
        (acp.SetSessionModeRequest(session_id="s1", mode_id="ask", **m), "SetSessionModeRequest"),
        (acp.SetSessionModeResponse(**m), "SetSessionModeResponse"),
        (option, "SessionConfigSelectOption"),
        (group, "SessionConfigSelectGroup"),
        (select, "SessionConfigOption"),
        (grouped, "SessionConfigOption"),
        (boolean, "SessionConfigOption"),
        (
            acp.SetSessionConfigOptionRequest(
                session_id="s1", config_id="model", value="fast", **m
            ),
            "SetSessionConfigOptionRequest",
        ),
        (
            acp.SetSessionConfigOptionRequest(
                session_id="s1", config_id="think", type="boolean", value=False, **m
            ),
            "SetSessionConfigOptionRequest",
        ),
        (
            acp.SetSessionConfigOptionResponse(config_options=[select, boolean], **m),
            "SetSessionConfigOptionResponse",
        ),
        (
            acp.PromptRequest(
                session_id="s1",
                prompt=[text, acp.EmbeddedResource(resource=text_resource)],
                **m,
            ),
            "PromptRequest",
        ),
        (acp.PromptResponse(stop_reason=acp.StopReason.MAX_TURN_REQUESTS, **m), "PromptResponse"),
        (acp.CancelNotification(session_id="s1", **m), "CancelNotification"),
        (acp.CancelRequestNotification(request_id=7, **m), "CancelRequestNotification"),
        (acp.CancelRequestNotification(request_id="req-7"), "CancelRequestNotification"),
        (permission_option, "PermissionOption"),
        (
            acp.RequestPermissionRequest(
                session_id="s1", tool_call=tool_update, options=[permission_option], **m
            ),
            "RequestPermissionRequest",
        ),
        (acp.SelectedPermissionOutcome(option_id="allow", **m), "RequestPermissionOutcome"),
        (acp.CancelledPermissionOutcome(**m), "RequestPermissionOutcome"),
        (
            acp.RequestPermissionResponse(
                outcome=acp.SelectedPermissionOutcome(option_id="allow"), **m
            ),
            "RequestPermissionResponse",
        ),
        (
            acp.ReadTextFileRequest(session_id="s1", path="/p/a.py", line=1, limit=10, **m),
            "ReadTextFileRequest",
        ),
        (acp.ReadTextFileResponse(content="x\n", **m), "ReadTextFileResponse"),
        (
            acp.WriteTextFileRequest(session_id="s1", path="/p/a.py", content="y", **m),
            "WriteTextFileRequest",
        ),
        (acp.WriteTextFileResponse(**m), "WriteTextFileResponse"),
        (
            acp.CreateTerminalRequest(
                session_id="s1",
                command="git",
                args=["status"],
                env=[env],
                cwd="/p",
                output_byte_limit=1 << 20,
                **m,
            ),
            "CreateTerminalRequest",
        ),
        (acp.CreateTerminalResponse(terminal_id="term-1", **m), "CreateTerminalResponse"),
        (
            acp.TerminalOutputRequest(session_id="s1", terminal_id="term-1", **m),
            "TerminalOutputRequest",
        ),
        (
            acp.TerminalOutputResponse(output="ok", truncated=False, exit_status=exit_status, **m),
            "TerminalOutputResponse",
        ),
        (exit_status, "TerminalExitStatus"),
        (
            acp.WaitForTerminalExitRequest(session_id="s1", terminal_id="term-1", **m),
            "WaitForTerminalExitRequest",
        ),
        (
            acp.WaitForTerminalExitResponse(exit_code=1, signal=None, **m),
            "WaitForTerminalExitResponse",
        ),
        (
            acp.KillTerminalRequest(session_id="s1", terminal_id="term-1", **m),
            "KillTerminalRequest",
        ),
        (acp.KillTerminalResponse(**m), "KillTerminalResponse"),
        (
            acp.ReleaseTerminalRequest(session_id="s1", terminal_id="term-1", **m),
            "ReleaseTerminalRequest",
        ),
        (acp.ReleaseTerminalResponse(**m), "ReleaseTerminalResponse"),
        (acp.ContentChunk(**chunk), "ContentChunk"),
        (acp.UserMessageChunk(**chunk), "SessionUpdate"),
        (acp.AgentMessageChunk(**chunk), "SessionUpdate"),
        (acp.AgentThoughtChunk(**chunk), "SessionUpdate"),
        (entry, "PlanEntry"),
        (acp.Plan(entries=[entry], **m), "SessionUpdate"),
        (command.input, "UnstructuredCommandInput"),
        (command, "AvailableCommand"),
        (acp.AvailableCommandsUpdate(available_commands=[command], **m), "SessionUpdate"),
        (acp.CurrentModeUpdate(current_mode_id="ask", **m), "SessionUpdate"),
        (acp.ConfigOptionUpdate(config_options=[select, boolean], **m), "SessionUpdate"),
        (
            acp.SessionInfoUpdate(title="New title", updated_at="2026-01-02T00:00:00Z", **m),
            "SessionUpdate",
        ),
        (acp.Cost(amount=0.25, currency="USD", **m), "Cost"),
        (
            acp.UsageUpdate(
                used=1200, size=200_000, cost=acp.Cost(amount=0.1, currency="EUR"), **m
            ),
            "SessionUpdate",
        ),
        (acp.Notice(severity="warning", title="Retrying", description="503", **m), "SessionUpdate"),
        (
            acp.CompactionUpdate(
                compaction_id="c1", status="completed", summary=[text], error="none", **m
            ),
            "SessionUpdate",
        ),
        (acp.CompactionSummaryChunk(compaction_id="c1", content=text, **m), "SessionUpdate"),
        (
            acp.SessionNotification(
                session_id="s1", update=acp.AgentMessageChunk(content=text, message_id="m"), **m
            ),
            "SessionNotification",
        ),
        (acp.Error(code=-32602, message="Invalid params", data={"field": "cwd"}, **m), "Error"),
    ]


SAMPLES = _samples()
IDS = [f"{type(model).__name__}-{index}" for index, (model, _) in enumerate(SAMPLES)]
MODEL_CLASSES = sorted(
    (
        getattr(acp, name)
        for name in acp.__all__
        if isinstance(getattr(acp, name), type)
        and issubclass(getattr(acp, name), acp.AcpModel)
        and getattr(acp, name) is not acp.AcpModel
    ),
    key=lambda cls: cls.__name__,
)


def _aliases(cls: type[acp.AcpModel]) -> dict[str, str]:
    """Wire name -> field name."""
    return {(info.alias or name): name for name, info in cls.model_fields.items()}


@pytest.mark.requirement("PROTO-SCHEMA-001")
def test_every_model_has_a_golden_sample() -> None:
    sampled = {type(model) for model, _ in SAMPLES}
    assert [cls.__name__ for cls in MODEL_CLASSES if cls not in sampled] == []


@pytest.mark.requirement("PROTO-SCHEMA-001")
@pytest.mark.requirement("PROTO-ROOT-001")
@pytest.mark.parametrize(("model", "def_name"), SAMPLES, ids=IDS)
def test_full_sample_matches_the_official_schema(model: acp.AcpModel, def_name: str) -> None:
    wire = acp.to_wire(model)
    assert_matches_def(def_name, wire, strict_roots=True, label=type(model).__name__)
    # Every field of the sample was set, so every declared key must be on the wire.
    assert set(wire) == set(_aliases(type(model))) - _unset_keys(model)


def _unset_keys(model: acp.AcpModel) -> set[str]:
    by_name = {name: alias for alias, name in _aliases(type(model)).items()}
    return {
        by_name[name] for name in type(model).model_fields if name not in model.model_fields_set
    }


@pytest.mark.requirement("PROTO-SCHEMA-001")
@pytest.mark.parametrize(("model", "def_name"), SAMPLES, ids=IDS)
def test_minimal_form_matches_the_schema_and_round_trips(
    model: acp.AcpModel, def_name: str
) -> None:
    cls = type(model)
    full = acp.to_wire(model)
    required = object_shape(def_name, full).required
    wire = {key: value for key, value in full.items() if key in required}
    assert_matches_def(def_name, wire, strict_roots=True, label=f"minimal {cls.__name__}")
    assert acp.to_wire(acp.from_wire(cls, wire)) == wire


@pytest.mark.parametrize(("model", "def_name"), SAMPLES, ids=IDS)
def test_full_sample_round_trips(model: acp.AcpModel, def_name: str) -> None:
    wire = acp.to_wire(model)
    again = acp.from_wire(type(model), wire)
    assert again == model
    assert acp.to_wire(again) == wire


# --- the models against the schema, field by field -------------------------------------


def _flags(nodes: tuple[Any, ...]) -> set[str]:
    return {key for node in nodes for key in node if key.startswith("x-deserialize-")}


def _model_flags(cls: type[acp.AcpModel], field_name: str) -> set[str]:
    metadata = cls.model_fields[field_name].metadata
    flags = set()
    if DefaultOnError in metadata or EmptyOnError in metadata:
        flags.add("x-deserialize-default-on-error")
    if SkipInvalidItems in metadata:
        flags.add("x-deserialize-skip-invalid-items")
    if NullAsEmpty in metadata or NullAsEmptyObject in metadata:
        flags.add("x-deserialize-default-on-null")
    return flags


@pytest.mark.requirement("PROTO-SCHEMA-001")
@pytest.mark.parametrize("cls", MODEL_CLASSES, ids=lambda cls: cls.__name__)
def test_model_declares_exactly_the_schema_fields(cls: type[acp.AcpModel]) -> None:
    # A model that flattens a schema union (SetSessionConfigOptionRequest) has several
    # samples: it declares what any variant declares and requires what all require.
    shapes = [object_shape(d, acp.to_wire(model)) for model, d in SAMPLES if type(model) is cls]
    declared = set().union(*(shape.properties for shape in shapes)) - {"_meta"}
    required = set.intersection(*(set(shape.required) for shape in shapes))
    aliases = _aliases(cls)
    tags = {alias for alias, name in aliases.items() if name in cls.__acp_tags__}
    assert set(aliases) - {"_meta"} == declared
    assert {a for a, n in aliases.items() if cls.model_fields[n].is_required()} == required - tags
    for alias, name in aliases.items():
        nodes = tuple(node for shape in shapes for node in shape.properties.get(alias, ()))
        if alias not in tags and nodes:  # some types (Error, ...) do not declare _meta
            assert _model_flags(cls, name) == _flags(nodes), alias


@pytest.mark.requirement("PROTO-SCHEMA-001")
@pytest.mark.parametrize(("model", "def_name"), SAMPLES, ids=IDS)
def test_model_accepts_null_exactly_where_the_schema_does(
    model: acp.AcpModel, def_name: str
) -> None:
    cls = type(model)
    wire = acp.to_wire(model)
    for alias, name in _aliases(cls).items():
        if name in cls.__acp_tags__ or "x-deserialize-default-on-null" in _model_flags(cls, name):
            continue  # a null tag selects another variant; default-on-null reads null as []
        nulled = {**wire, alias: None}
        try:
            assert_matches_def(def_name, nulled)
            schema_accepts = True
        except AssertionError:
            schema_accepts = False
        try:
            # Python-side validation: strict, no lenient defaults.
            cls.model_validate(nulled, by_alias=True, by_name=False)
            model_accepts = True
        except ValidationError:
            model_accepts = False
        assert model_accepts == schema_accepts, f"{cls.__name__}.{name} and null"


# --- rules every type keeps ---------------------------------------------------------------


@pytest.mark.requirement("PROTO-META-001")
@pytest.mark.parametrize("cls", MODEL_CLASSES, ids=lambda cls: cls.__name__)
def test_every_type_carries_meta(cls: type[acp.AcpModel]) -> None:
    field = cls.model_fields["field_meta"]
    assert field.alias == "_meta"
    assert field.default is None


@pytest.mark.requirement("PROTO-META-001")
@pytest.mark.parametrize(("model", "def_name"), SAMPLES, ids=IDS)
def test_meta_crosses_the_wire_on_every_sample(model: acp.AcpModel, def_name: str) -> None:
    wire = {**acp.to_wire(model), "_meta": {"vendor.example/flag": [1, {"a": None}]}}
    read = acp.from_wire(type(model), wire)
    assert read.field_meta == {"vendor.example/flag": [1, {"a": None}]}
    assert acp.to_wire(read)["_meta"] == wire["_meta"]


@pytest.mark.requirement("PROTO-META-002")
@pytest.mark.parametrize(("model", "def_name"), SAMPLES, ids=IDS)
def test_meta_never_overrides_a_field(model: acp.AcpModel, def_name: str) -> None:
    cls = type(model)
    wire = acp.to_wire(model)
    # A `_meta` naming every field (wire and Python spelling) with a different value.
    decoy: dict[str, Any] = {}
    for alias, name in _aliases(cls).items():
        if alias != "_meta":
            decoy[alias] = decoy[name] = "/etc"
    read = acp.from_wire(cls, {**wire, "_meta": decoy})
    assert read.model_dump(exclude={"field_meta"}) == model.model_dump(exclude={"field_meta"})
    assert read.field_meta == decoy


@pytest.mark.requirement("PROTO-UNKNOWN-001")
@pytest.mark.requirement("PROTO-ROOT-001")
@pytest.mark.parametrize(("model", "def_name"), SAMPLES, ids=IDS)
def test_unknown_input_fields_are_ignored_and_never_emitted(
    model: acp.AcpModel, def_name: str
) -> None:
    wire = acp.to_wire(model)
    noisy = {**wire, "futureField": {"x": 1}, "vendorFlag": True, "field_meta": {"not": "meta"}}
    assert acp.to_wire(acp.from_wire(type(model), noisy)) == wire


@pytest.mark.requirement("PROTO-CAMEL-001")
@pytest.mark.parametrize("cls", MODEL_CLASSES, ids=lambda cls: cls.__name__)
def test_wire_names_are_camel_case(cls: type[acp.AcpModel]) -> None:
    for name, info in cls.model_fields.items():
        if name == "field_meta":
            continue
        head, *rest = name.split("_")
        assert info.alias == head + "".join(part.title() for part in rest)
        assert "_" not in (info.alias or "")


# --- whatever is read from the wire is re-emitted valid -------------------------------------

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
    | st.sampled_from(["text", "diff", "select", "boolean", "terminal", "http", "tool_call"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=6,
)


def _mutate(value: Any, data: st.DataObject) -> Any:
    """One random edit somewhere inside `value`: replace, drop or add a member."""
    if isinstance(value, dict) and value and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value)))
        action = data.draw(st.sampled_from(["descend", "drop", "add"]))
        if action == "drop":
            return {k: v for k, v in value.items() if k != key}
        if action == "add":
            return {**value, data.draw(st.text(max_size=8)): data.draw(_JSON)}
        return {**value, key: _mutate(value[key], data)}
    if isinstance(value, list) and value and data.draw(st.booleans()):
        index = data.draw(st.integers(0, len(value) - 1))
        return [*value[:index], _mutate(value[index], data), *value[index + 1 :]]
    return data.draw(_JSON)


@pytest.mark.requirement("PROTO-SCHEMA-001")
@pytest.mark.requirement("PROTO-LENIENT-001")
@settings(max_examples=400)
@given(data=st.data())
def test_whatever_is_read_is_rejected_cleanly_or_re_emitted_valid(data: st.DataObject) -> None:
    model, def_name = data.draw(st.sampled_from(SAMPLES))
    mutated = _mutate(acp.to_wire(model), data)
    try:
        read = acp.from_wire(type(model), mutated)
    except ValidationError:
        return
    assert_matches_def(def_name, acp.to_wire(read), strict_roots=True, label="re-emitted")
