"""Tests of the schema oracle itself (`tests/acp_schema.py`): it accepts what ACP allows,
rejects what it does not with a readable message, and matches responses to requests."""

from __future__ import annotations

import json
from typing import Any

import acp_schema
import pytest
from acp_schema import AgentWireValidator, undeclared_keys
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012


def _update(update: dict[str, Any], **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s1", "update": update, **params},
    }


CHUNK = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hi"}}


def _rejects(validator: AgentWireValidator, message: Any) -> str:
    with pytest.raises(AssertionError) as caught:
        validator.check(message)
    return str(caught.value)


def test_a_valid_exchange_passes() -> None:
    validator = AgentWireValidator(strict_roots=True)
    client = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": "n", "method": "session/new", "params": {"cwd": "/p"}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {}},
        {"jsonrpc": "2.0", "id": 3, "method": "_vendor/thing", "params": {}},
    ]
    for message in client:
        validator.note_client_message(message)
    agent = [
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1, "authMethods": []}},
        {"jsonrpc": "2.0", "id": "n", "result": {"sessionId": "s1"}},
        _update(CHUNK, _meta={"traceparent": "00-1-2-01"}),
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "session/request_permission",
            "params": {
                "sessionId": "s1",
                "toolCall": {"toolCallId": "c1", "title": "Run ls", "kind": "execute"},
                "options": [{"optionId": "a", "name": "Allow", "kind": "allow_once"}],
            },
        },
        {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 0}},
        {"jsonrpc": "2.0", "method": "_vendor/progress", "params": {"anything": [1, 2]}},
        {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "cancelled"}},
        {"jsonrpc": "2.0", "id": 3, "result": {"free": "form"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
    ]
    for message in agent:
        validator.check(message)
        # The per-kind envelope check is stricter than the root, never looser.
        assert acp_schema._validator("").is_valid(message)
    assert validator.checked == len(agent)


def test_a_tool_call_without_title_is_rejected_with_its_path() -> None:
    validator = AgentWireValidator()
    message = _rejects(validator, _update({"sessionUpdate": "tool_call", "toolCallId": "c1"}))
    assert "'session/update' notification" in message
    assert "at params.update: 'title' is a required property" in message
    assert "SessionNotification" in message


def test_a_wrong_type_deep_inside_is_located() -> None:
    update = {**CHUNK, "content": {"type": "text", "text": 42}}
    message = _rejects(AgentWireValidator(), _update(update))
    assert "at params.update.content.text: 42 is not of type 'string'" in message


@pytest.mark.requirement("PROTO-ROOT-001")
def test_strict_roots_flags_custom_fields_outside_meta() -> None:
    # The schema itself allows extra keys; ACP forbids custom root fields.
    flagged = _update({**CHUNK, "reset": True})
    AgentWireValidator().check(flagged)
    message = _rejects(AgentWireValidator(strict_roots=True), flagged)
    assert "params.update.reset" in message
    assert "custom data belongs in _meta" in message
    AgentWireValidator(strict_roots=True).check(_update({**CHUNK, "_meta": {"reset": True}}))


@pytest.mark.requirement("PROTO-ROOT-001")
def test_strict_roots_flags_nested_and_envelope_keys() -> None:
    validator = AgentWireValidator(strict_roots=True)
    nested = _update({**CHUNK, "content": {"type": "text", "text": "x", "bold": True}})
    assert "params.update.content.bold" in _rejects(validator, nested)
    envelope = {**_update(CHUNK), "trace": 1}
    assert "trace" in _rejects(validator, envelope)


def test_strict_roots_leaves_free_form_values_alone() -> None:
    call = {
        "sessionUpdate": "tool_call",
        "toolCallId": "c1",
        "title": "t",
        "rawInput": {"anything": {"goes": 1}},
        "_meta": {"vendor": {"x": 1}},
    }
    assert undeclared_keys("SessionUpdate", call) == []
    auth = {"type": "terminal", "id": "t", "name": "T", "env": {"ANY_NAME": "1"}}
    assert undeclared_keys("AuthMethod", auth) == []
    assert undeclared_keys("AuthMethod", {**auth, "extra": 1}) == ["extra"]


def test_responses_are_checked_against_the_method_called() -> None:
    validator = AgentWireValidator()
    validator.note_client_message(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
    )
    validator.note_client_message(
        {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {}}
    )
    missing = _rejects(validator, {"jsonrpc": "2.0", "id": 1, "result": {"agentInfo": None}})
    assert "response to 'initialize' (id 1)" in missing
    assert "'protocolVersion' is a required property (ACP def InitializeResponse)" in missing
    wrong = _rejects(validator, {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "done"}})
    assert "at result.stopReason" in wrong


def test_results_for_unknown_or_answered_ids_are_rejected() -> None:
    validator = AgentWireValidator()
    assert "never sent" in _rejects(validator, {"jsonrpc": "2.0", "id": 9, "result": {}})
    validator.note_client_message({"jsonrpc": "2.0", "id": "1", "method": "session/cancel"})
    # JSON identity: the string id "1" is not the number 1.
    assert "never sent" in _rejects(validator, {"jsonrpc": "2.0", "id": 1, "result": {}})
    assert "no result in ACP v1" in _rejects(validator, {"jsonrpc": "2.0", "id": "1", "result": {}})
    validator.note_client_message({"jsonrpc": "2.0", "id": 5, "method": "session/close"})
    validator.check({"jsonrpc": "2.0", "id": 5, "result": {}})
    assert "already answered" in _rejects(
        validator, {"jsonrpc": "2.0", "id": 5, "error": {"code": -32603, "message": "x"}}
    )


def test_error_responses_need_code_and_message() -> None:
    validator = AgentWireValidator()
    validator.check({"jsonrpc": "2.0", "id": 4, "error": {"code": -32601, "message": "nope"}})
    bad = {"jsonrpc": "2.0", "id": None, "error": {"code": "-32700", "message": "Parse error"}}
    assert "error.code" in _rejects(validator, bad)


def test_methods_the_agent_may_not_send_are_rejected() -> None:
    validator = AgentWireValidator()
    prompt = {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {}}
    assert "may not send a request 'session/prompt'" in _rejects(validator, prompt)
    cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}
    assert "may not send a notification" in _rejects(validator, cancel)
    no_version = {"method": "session/update", "params": {"sessionId": "s", "update": CHUNK}}
    assert "envelope" in _rejects(validator, no_version)
    assert "not an object" in _rejects(validator, [1, 2])


def test_check_lines_reads_bytes_and_text() -> None:
    validator = AgentWireValidator()
    lines: list[bytes | str] = [
        json.dumps(_update(CHUNK)).encode() + b"\n",
        "\n",
        json.dumps(_update(CHUNK)) + "\n",
    ]
    assert validator.check_lines(lines) == 2
    with pytest.raises(AssertionError, match="agent line 2 is not JSON"):
        validator.check_lines([json.dumps(_update(CHUNK)), "Traceback (most recent call last):"])


def test_the_tag_shortcut_agrees_with_the_plain_validator() -> None:
    registry = Registry().with_resource(
        "urn:plain", DRAFT202012.create_resource(acp_schema.schema())
    )
    plain = Draft202012Validator({"$ref": "urn:plain#/$defs/SessionUpdate"}, registry=registry)
    fast = acp_schema._validator("/$defs/SessionUpdate")
    cases = [
        CHUNK,
        {**CHUNK, "content": {"type": "image", "data": "AA=="}},
        {"sessionUpdate": "tool_call", "toolCallId": "c"},
        {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t", "kind": "nope"},
        {"sessionUpdate": "plan", "entries": []},
        {"sessionUpdate": "unknown_kind"},
        {"sessionUpdate": 3},
        {"content": {"type": "text", "text": "no tag"}},
    ]
    assert [fast.is_valid(case) for case in cases] == [plain.is_valid(case) for case in cases]
    assert [fast.is_valid(case) for case in cases] == [True, False, False, False, True] + [
        False
    ] * 3
