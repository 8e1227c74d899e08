"""MCP servers through the agent, in-process: offered, gated, held, keyed, run once.

Our SDK fault server (tests/mcp/fault_server.py) is a real subprocess over stdio; the editor
and the bridge talk over a memory pair, every message validated against the ACP schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from bridge import running_bridge, scripted_config
from mcp_tests.mcpkit import (
    MCP_WAIT,
    REFUND,
    RecordingProvider,
    broken_refund_script,
    calls,
    fault_server,
    one_call_script,
)

from acp_bridge.mcp import McpLimits

pytestmark = pytest.mark.anyio


def _by_id(option_id: str) -> Any:
    def policy(params: dict[str, Any]) -> dict[str, Any]:
        ids = [o["optionId"] for o in params["options"]]
        assert option_id in ids, ids
        return {"outcome": {"outcome": "selected", "optionId": option_id}}

    return policy


async def _new_session(editor: Any, cwd: Path, servers: list[dict[str, Any]]) -> str:
    result = await editor.call("session/new", {"cwd": str(cwd), "mcpServers": servers})
    return str(result["sessionId"])


@pytest.mark.requirement("MCP-CAP-001")
async def test_initialize_advertises_the_mcp_transports_that_work(tmp_path: Path) -> None:
    async with running_bridge(scripted_config(tmp_path / "state")) as editor:
        result = await editor.initialize()
    assert result["agentCapabilities"]["mcpCapabilities"] == {"http": True, "sse": True}


@pytest.mark.requirement("MCP-TOOL-001")
@pytest.mark.requirement("MCP-EFFECT-001")
@pytest.mark.requirement("MCP-PERM-001")
@pytest.mark.requirement("MCP-LIFE-002")
async def test_the_broken_refund_stream_calls_the_mcp_tool_exactly_once(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    provider = RecordingProvider(broken_refund_script())
    config = scripted_config(tmp_path / "state", provider=provider)
    with anyio.fail_after(90):
        allow = _by_id("allow-always-group")
        async with running_bridge(config, permission=allow, wait=MCP_WAIT) as editor:
            await editor.initialize()
            session = await _new_session(editor, tmp_path, [fault_server(log)])
            reply = await editor.prompt(session, "refund ORD-7781")
            assert reply["result"]["stopReason"] == "end_turn"
            updates = editor.updates(session)
    # The server received one call, from the completed attempt only (TURN-002, EFFECT-001).
    assert [c["order_id"] for c in calls(log, "refund")] == ["ORD-7781"]
    shown = [u for u in updates if u["sessionUpdate"] == "tool_call"]
    assert len(shown) == 1
    assert shown[0]["title"] == "faults: refund"
    assert shown[0]["rawInput"] == {"order_id": "ORD-7781", "amount": "full"}
    asked = editor.requests_of("session/request_permission")
    assert len(asked) == 1
    names = [o["name"] for o in asked[0]["params"]["options"]]
    assert "Allow always for every tool of MCP server faults" in names
    # The offered name, and the result in the model's next request.
    assert REFUND in {spec.name for spec in provider.requests[0].tools}
    assert provider.tool_results() == [(REFUND, "Refunded full on order ORD-7781.", False)]
    report = reply["result"]["_meta"]["acpBridge"]
    assert report is not None


@pytest.mark.requirement("MCP-LIFE-001")
@pytest.mark.requirement("MCP-LIFE-002")
async def test_a_server_that_never_answers_holds_neither_session_new_nor_the_prompt(
    tmp_path: Path,
) -> None:
    limits = McpLimits(connect_timeout=600, ready_timeout=0.5)
    provider = RecordingProvider(one_call_script("mcp__silent__anything", {}))
    config = scripted_config(tmp_path / "state", provider=provider, mcp_limits=limits)
    silent = {"name": "silent", "command": "sleep", "args": ["600"], "env": []}
    with anyio.fail_after(60):
        async with running_bridge(config, wait=MCP_WAIT) as editor:
            await editor.initialize()
            session = await _new_session(editor, tmp_path, [silent])  # answered at once
            reply = await editor.prompt(session, "go")  # waits 0.5 s at most, then runs
            assert reply["result"]["stopReason"] == "end_turn"
            closed = await editor.call("session/close", {"sessionId": session})
            assert closed == {}
    offered = {spec.name for spec in provider.requests[0].tools}
    assert not any(name.startswith("mcp__") for name in offered)
    assert provider.tool_results()[0][2] is True  # an unknown tool: a readable error


@pytest.mark.requirement("MCP-FAIL-001")
async def test_a_server_that_cannot_start_is_a_notice_after_the_response(tmp_path: Path) -> None:
    config = scripted_config(tmp_path / "state")
    broken = {"name": "broken", "command": "/nonexistent/server", "args": [], "env": []}
    with anyio.fail_after(60):
        async with running_bridge(config, wait=MCP_WAIT) as editor:
            await editor.call(
                "initialize",
                {
                    "protocolVersion": 1,
                    "clientCapabilities": {"session": {"notices": {}}},
                    "clientInfo": {"name": "notices-editor", "version": "0"},
                },
            )
            session = await _new_session(editor, tmp_path, [broken])
            reply = await editor.prompt(session, "/hello")  # the session carries on
            assert reply["result"]["stopReason"] == "end_turn"
            notices = [u for u in editor.updates(session) if u["sessionUpdate"] == "notice"]
    assert len(notices) == 1
    assert notices[0]["severity"] == "error"
    assert notices[0]["title"].startswith("MCP server 'broken' could not be started")
