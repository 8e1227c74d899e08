"""A big file's edit over the wire: its diff goes out once, and only its hashes are stored.

Issue 15 item 5: a 10 MB edit_file sent its diff three times (tool_call, the permission
request's toolCall, the completed update) and put the whole old and new text into SQLite on
every save of its tool call. Here a file of about 1 MB (above the stored-diff threshold) is
edited in-process behind the permission gate; the wire and the state files are inspected.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from bridge import running_bridge, scripted_config

from acp_bridge.providers.scripted import ScriptedProvider, loads_script
from acp_bridge.tools._stored import STORED_DIFF_CHARS

pytestmark = pytest.mark.anyio

TOKEN = "BODY-TOKEN-7f3a"  # once in the file: in the old text once and in the new text once

EDIT = {
    "name": "big-edit",
    "description": "one edit of a big file",
    "calls": [
        {
            "attempts": [
                [
                    {
                        "tool_call": "edit_file",
                        "arguments": {
                            "path": "big.txt",
                            "old_text": "NEEDLE_LINE",
                            "new_text": "EDITED_LINE",
                        },
                    },
                    {"finish": "auto"},
                ]
            ]
        },
        {"attempts": [[{"text": "Edited."}, {"finish": "stop"}]]},
    ],
}


def _big_text() -> str:
    lines = [f"line {n:07d} of ordinary text\n" for n in range(40_000)]
    lines[10] = f"{TOKEN}\n"
    lines[20_000] = "NEEDLE_LINE\n"
    text = "".join(lines)
    assert len(text) > STORED_DIFF_CHARS
    return text


async def _edit(tmp_path: Path) -> tuple[Path, list[dict[str, Any]], str]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "big.txt").write_text(_big_text())
    provider = ScriptedProvider(loads_script(json.dumps(EDIT)), delay_ms=0)
    config = scripted_config(tmp_path / "state", provider=provider)
    async with running_bridge(config, fs=False) as ed:
        await ed.initialize()
        session = await ed.new_session(workspace)
        reply = await ed.prompt(session, "edit the big file")
        assert reply["result"]["stopReason"] == "end_turn"
        received = list(ed.received)
    return workspace, received, session


def _carries_diff(message: dict[str, Any]) -> bool:
    params = message.get("params") or {}
    carrier = params.get("toolCall") or params.get("update") or {}
    content = carrier.get("content")
    return isinstance(content, list) and any(item.get("type") == "diff" for item in content)


@pytest.mark.requirement("PERF-BIG-001")
async def test_a_big_edit_sends_its_diff_once(tmp_path: Path) -> None:
    workspace, received, _ = await _edit(tmp_path)
    assert "EDITED_LINE" in (workspace / "big.txt").read_text()
    carriers = [m for m in received if _carries_diff(m)]
    assert [m["params"]["update"]["sessionUpdate"] for m in carriers] == ["tool_call"]
    wire = "\n".join(json.dumps(m) for m in received)
    assert wire.count(TOKEN) == 2  # the diff's old text and new text, once each
    (asked,) = [m for m in received if m.get("method") == "session/request_permission"]
    assert "content" not in asked["params"]["toolCall"]
    assert (
        asked["params"]["toolCall"]["toolCallId"] == carriers[0]["params"]["update"]["toolCallId"]
    )
    (completed,) = [
        m
        for m in received
        if (m.get("params") or {}).get("update", {}).get("status") == "completed"
    ]
    assert "content" not in completed["params"]["update"]  # updates merge: it is unchanged


@pytest.mark.requirement("PERF-BIG-002")
async def test_the_ledger_and_the_journal_hold_hashes_not_the_file(tmp_path: Path) -> None:
    workspace, _, _ = await _edit(tmp_path)
    state = tmp_path / "state"
    files = sorted(path for path in state.rglob("*") if path.is_file())
    assert {path.name for path in files} >= {"effects.sqlite3", "sessions.sqlite3"}
    stored = b"".join(path.read_bytes() for path in files)  # databases and their WALs
    assert TOKEN.encode() not in stored
    new_hash = hashlib.sha256((workspace / "big.txt").read_bytes()).hexdigest()
    old_hash = hashlib.sha256(_big_text().encode()).hexdigest()
    assert new_hash.encode() in stored
    assert old_hash.encode() in stored
    assert sum(len(data) for data in (path.read_bytes() for path in files)) < len(_big_text())
