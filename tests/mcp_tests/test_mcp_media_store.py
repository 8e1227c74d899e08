"""An MCP tool's media kept where the bridge keeps outcomes: the effect ledger, the journal, and
what crash recovery rebuilds (MCP-MEDIA-003). Our SDK fault server's `snapshot` is a side
effect answering with text, a PNG and a binary resource.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from mcp_tests.mcpkit import calls, fault_server
from sessions.stdio_kit import StdioEditor, write_script

from acp_bridge.providers import MediaPart, ToolResults
from acp_bridge.sessions import SessionStore
from acp_bridge.tools import MediaContent, ToolOutcome
from acp_bridge.turn import EffectKey, EffectLedger

pytestmark = pytest.mark.anyio

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(64))).decode()
SNAPSHOT = "mcp__faults__snapshot"


@pytest.mark.requirement("MCP-MEDIA-003")
def test_the_effect_ledger_keeps_a_results_media(tmp_path: Path) -> None:
    image = MediaContent("image", "image/png", PNG)
    text = MediaContent("resource", "text/markdown", uri="file:///r.md", text="# r")
    outcome = ToolOutcome(ok=True, for_model="[image image/png, 72 bytes]", content=(image, text))
    key = EffectKey.derive("s-turn1", SNAPSHOT, {"name": "a"}, 0)
    with EffectLedger(tmp_path) as ledger:
        ledger.record_started(key, session_id="s", mode="ask")
        ledger.record_done(key, outcome)
    with EffectLedger(tmp_path) as ledger:
        record = ledger.lookup(key)
    assert record is not None
    assert record.outcome is not None
    assert record.outcome.content == (image, text)


def _snapshot_script(path: Path, *, then_block: bool) -> Path:
    """Call 1 takes the snapshot (an MCP side effect); call 2 answers, after a long pause if
    asked (so a kill -9 lands after the effect and before the turn ends)."""
    second: dict[str, Any] = (
        {"text": "Done.", "delay_ms": 60_000} if then_block else {"text": "Done."}
    )
    snapshot = {"tool_call": SNAPSHOT, "arguments": {"name": "desk"}}
    return write_script(
        path,
        "snapshot",
        [
            {"attempts": [[snapshot, {"finish": "auto"}]]},
            {"attempts": [[{"text": "Took it. "}, second, {"finish": "stop"}]]},
        ],
    )


@pytest.mark.subprocess
@pytest.mark.requirement("MCP-MEDIA-003")
def test_kill_9_after_an_mcp_image_then_the_reused_effect_keeps_the_image(
    tmp_path: Path,
) -> None:
    log, state, home, work = (tmp_path / n for n in ("calls.jsonl", "state", "home", "work"))
    work.mkdir()
    slow = _snapshot_script(tmp_path / "slow.json", then_block=True)
    fast = _snapshot_script(tmp_path / "fast.json", then_block=False)
    servers = [fault_server(log)]
    prompt = [{"type": "text", "text": "snapshot the desk"}]
    with StdioEditor(state, home, "--script", str(slow)) as first:
        first.initialize()
        made = first.call("session/new", {"cwd": str(work), "mcpServers": servers})
        session = made["result"]["sessionId"]
        first.request("session/prompt", {"sessionId": session, "prompt": prompt})
        first.read_until(_completed)
        first.kill()  # kill -9 while model call 2 streams: the turn stays running
    assert [c["name"] for c in calls(log, "snapshot")] == ["desk"]
    with StdioEditor(state, home, "--script", str(fast)) as second:
        second.initialize()
        params = {"sessionId": session, "cwd": str(work), "mcpServers": servers}
        reply = second.call("session/load", params)
        assert "result" in reply
        replayed = second.updates(session)
        assert {"type": "image", "data": PNG, "mimeType": "image/png"} in _shown(replayed)
        # The same prompt again: the effect is reused from the ledger, image and all.
        again = second.call("session/prompt", {"sessionId": session, "prompt": prompt})
        assert again["result"]["stopReason"] == "end_turn"
        effects = again["result"]["_meta"]["acpBridge"]["effects"]
        assert [(e["ran"], e["reused"]) for e in effects] == [(False, True)]
        assert {"type": "image", "data": PNG, "mimeType": "image/png"} in _shown(
            second.updates(session)
        )
        second.stop()
    assert [c["name"] for c in calls(log, "snapshot")] == ["desk"]  # once in total
    with SessionStore(state) as store:
        history = store.history(session)
    media = [r.media for m in history if isinstance(m, ToolResults) for r in m.results]
    assert media
    assert all(MediaPart("image/png", PNG) in parts for parts in media)


def _completed(message: dict[str, Any]) -> bool:
    update = message.get("params", {}).get("update", {})
    return update.get("sessionUpdate") == "tool_call_update" and update.get("status") == "completed"


def _shown(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        item["content"]
        for u in updates
        if u["sessionUpdate"] in ("tool_call", "tool_call_update")
        for item in u.get("content") or []
        if item["type"] == "content"
    ]
