"""The method tables against the official schema: names are exactly its `x-method`, each
side's table holds what that side handles, and each model is the method's def."""

from __future__ import annotations

import pytest
from acp_schema import agent_sent_defs, client_sent_defs, schema

import acp_bridge.protocol as acp

# Stable in the schema, deliberately not modelled: the bridge never sends them.
NOT_MODELLED = {"elicitation/create", "elicitation/complete"}


def _x(def_name: str, key: str) -> str:
    value = schema()["$defs"][def_name][key]
    assert isinstance(value, str)
    return value


@pytest.mark.requirement("PROTO-METHOD-001")
def test_agent_methods_are_what_the_client_may_send() -> None:
    sent = client_sent_defs()
    expected = set(sent.requests) | (set(sent.notifications) - set(acp.PROTOCOL_METHODS))
    assert set(acp.AGENT_METHODS) == expected
    for method, spec in acp.AGENT_METHODS.items():
        if spec.is_notification:
            assert spec.params.__name__ == sent.notifications[method]
        else:
            assert spec.params.__name__ == sent.requests[method]
            assert spec.result is not None
            assert spec.result.__name__ == agent_sent_defs().responses[method]
        assert (_x(spec.params.__name__, "x-method"), _x(spec.params.__name__, "x-side")) == (
            method,
            "agent",
        )


@pytest.mark.requirement("PROTO-METHOD-001")
def test_client_methods_are_what_the_agent_may_send() -> None:
    sent = agent_sent_defs()
    expected = set(sent.requests) | (set(sent.notifications) - set(acp.PROTOCOL_METHODS))
    assert set(acp.CLIENT_METHODS) == expected - NOT_MODELLED
    for method, spec in acp.CLIENT_METHODS.items():
        if spec.is_notification:
            assert spec.params.__name__ == sent.notifications[method]
        else:
            assert spec.params.__name__ == sent.requests[method]
            assert spec.result is not None
            assert spec.result.__name__ == client_sent_defs().responses[method]
        assert (_x(spec.params.__name__, "x-method"), _x(spec.params.__name__, "x-side")) == (
            method,
            "client",
        )


@pytest.mark.requirement("PROTO-METHOD-001")
def test_protocol_methods_are_the_dollar_methods() -> None:
    assert dict(acp.PROTOCOL_METHODS) == {
        "$/cancel_request": acp.MethodSpec(acp.CancelRequestNotification, None)
    }
    assert _x("CancelRequestNotification", "x-side") == "protocol"
    assert client_sent_defs().notifications["$/cancel_request"] == "CancelRequestNotification"
    assert agent_sent_defs().notifications["$/cancel_request"] == "CancelRequestNotification"


def test_every_schema_method_is_in_a_table_or_named_as_not_modelled() -> None:
    methods = {node["x-method"] for node in schema()["$defs"].values() if "x-method" in node}
    tables = set(acp.AGENT_METHODS) | set(acp.CLIENT_METHODS) | set(acp.PROTOCOL_METHODS)
    assert methods == tables | NOT_MODELLED
    assert not tables & NOT_MODELLED


def test_the_tables_are_read_only() -> None:
    with pytest.raises(TypeError):
        acp.AGENT_METHODS["session/fork"] = acp.MethodSpec(acp.NewSessionRequest, None)  # type: ignore[index]
    spec = acp.AGENT_METHODS["session/prompt"]
    params, result = spec
    assert (params, result, spec.is_notification) == (acp.PromptRequest, acp.PromptResponse, False)
    assert acp.AGENT_METHODS["session/cancel"].is_notification
