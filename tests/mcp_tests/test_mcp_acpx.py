"""End to end: acpx (tests/npm) passes our SDK fault server with `--mcp-config`; a scripted
stream (`--script`) calls its refund tool by the offered name, breaking after the call once.

The call is shown once, asked about once, runs once on the server, and its result is in the
history the next model call carries (read back from the session store).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from acp_schema import AgentWireValidator, agent_sent_defs, client_sent_defs
from external.test_external_acpx import AcpxRun, _methods
from mcp_tests.mcpkit import REFUND, broken_refund_script, calls, fault_server
from subprocess_util import (
    acpx_executable,
    bridge_argv,
    isolated_env,
    run_bounded,
    split_transcript,
)

from acp_bridge.providers import ToolResults
from acp_bridge.sessions import SessionStore

pytestmark = [pytest.mark.npm, pytest.mark.subprocess]

TIMEOUT = 240.0


@pytest.mark.requirement("MCP-E2E-001")
@pytest.mark.requirement("MCP-EFFECT-001")
def test_acpx_with_mcp_config_runs_the_mcp_tool_once(tmp_path: Path) -> None:
    acpx = acpx_executable()
    workspace, state, log = tmp_path / "workspace", tmp_path / "state", tmp_path / "calls.jsonl"
    workspace.mkdir()
    script = tmp_path / "refund.json"
    script.write_text(json.dumps(broken_refund_script()))
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": [fault_server(log)]}))
    agent = shlex.join(bridge_argv("--state-dir", str(state), "--script", str(script)))
    argv = [
        str(acpx),
        "--agent",
        agent,
        "--cwd",
        str(workspace),
        "--approve-all",
        "--mcp-config",
        str(config),
        "--format",
        "json",
        "--json-strict",
        "--timeout",
        str(int(TIMEOUT) - 40),
        "exec",
        "refund order ORD-7781",
    ]
    result = run_bounded(argv, timeout=TIMEOUT, env=isolated_env(tmp_path / "home"), cwd=workspace)
    assert result.returncode == 0, (result.stdout[-3000:], result.stderr[-3000:])
    wire = split_transcript(
        result.stdout.splitlines(), _methods(agent_sent_defs()), _methods(client_sent_defs())
    )
    validator = AgentWireValidator(strict_roots=True)
    for entry in wire:
        if entry.sender == "client":
            validator.note_client_message(entry.message)
        else:
            validator.check(entry.message)
    run = AcpxRun(result, wire, validator.checked)
    [new] = [m for m in run.sent_by("client") if m.get("method") == "session/new"]
    assert [s["name"] for s in new["params"]["mcpServers"]] == ["faults"]
    assert run.prompt_result()["stopReason"] == "end_turn"
    shown = [u for u in run.updates() if u["sessionUpdate"] == "tool_call"]
    assert [(u["title"], u["rawInput"]) for u in shown] == [
        ("faults: refund", {"order_id": "ORD-7781", "amount": "full"})
    ]
    [asked] = run.agent_requests("session/request_permission")
    assert run.client_answer(asked)["result"]["outcome"]["outcome"] == "selected"
    done = [u for u in run.updates() if u.get("status") == "completed"]
    assert len(done) == 1
    assert len(calls(log, "refund")) == 1
    # The result entered the history that model call 2 was sent (SESS-010 keeps it there).
    [created] = [m for m in run.sent_by("agent") if m.get("id") == new["id"] and "result" in m]
    session_id = created["result"]["sessionId"]
    store = SessionStore(state)
    try:
        results = [
            (r.name, r.output)
            for m in store.history(session_id)
            if isinstance(m, ToolResults)
            for r in m.results
        ]
    finally:
        store.close()
    assert results == [(REFUND, "Refunded full on order ORD-7781.")]
