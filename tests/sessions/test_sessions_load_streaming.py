"""session/load streams: pages of turns, each written before the next is read, lines built directly.

Issue 15.3: a long session's replay must not wait for (or hold) the whole session. The store
yields pages of what the turns showed; the agent writes a page's lines (many per write) before
it reads the next page, so the first update leaves after one small page whatever the length,
and memory holds one page (PERF-LOAD-001). The lines built directly for text and thought
chunks and plain-text prompts are byte for byte the wire models' (PERF-LOAD-003), and every
line the agent writes validates against the ACP schema (the scripted editor checks).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from acp_schema import schema_path
from bridge import scripted_config
from hypothesis import example, given
from hypothesis import strategies as st
from sessions.sesskit import load, serving
from sessions.shownkit import SID, fill

from acp_bridge import protocol as acp
from acp_bridge.agent._chunks import chunk_params
from acp_bridge.agent._replay import replay_updates
from acp_bridge.agent._replaying import ReplayLines
from acp_bridge.jsonrpc import JsonRpcPeer
from acp_bridge.sessions import PromptShown, ReplayItem, SessionStore, transcript
from acp_bridge.turn import AgentText, AgentThought
from acp_bridge.wire import encode

pytestmark = pytest.mark.anyio

TURNS = 7
TESTS = Path(__file__).resolve().parents[1]


async def _record(work: Path, state: Path) -> str:
    async with serving(scripted_config(state)) as editor:
        await editor.initialize()
        session_id = await editor.new_session(work)
        for n in range(TURNS):
            blocks = [{"type": "text", "text": f"turn {n}"}]
            if n == 2:  # a block that is not plain text goes through the wire models
                blocks.append({"type": "resource_link", "uri": "file:///x/a.md", "name": "a.md"})
            reply = await editor.request(
                "session/prompt", {"sessionId": session_id, "prompt": blocks}
            )
            assert reply["result"]["stopReason"] == "end_turn"
    return str(session_id)


def _models_lines(session_id: str, item: ReplayItem, *, compaction: bool = True) -> list[Any]:
    """The messages that replay an item the general way: the wire models, `to_wire` of the
    notification."""
    return [
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": acp.to_wire(acp.SessionNotification(session_id=session_id, update=u)),
        }
        for u in replay_updates(item, compaction=compaction)
    ]


def _check(lines: ReplayLines, session_id: str, item: ReplayItem, compaction: bool = True) -> None:
    """The direct lines are the wire models' messages; a chunk's line is also byte for byte
    the line a live chunk of that text is (`chunk_params`, `encode`)."""
    found = lines.of(item)
    assert [json.loads(line) for line in found] == _models_lines(
        session_id, item, compaction=compaction
    )
    assert all(line.endswith(b"\n") and line.count(b"\n") == 1 for line in found)
    if isinstance(item, AgentText | AgentThought):
        live = {"jsonrpc": "2.0", "method": "session/update"}
        assert found == [encode({**live, "params": chunk_params(session_id, item)})]


@pytest.mark.requirement("PERF-LOAD-001")
async def test_each_page_is_written_before_the_next_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, state = tmp_path / "work", tmp_path / "state"
    work.mkdir()
    session_id = await _record(work, state)
    events: list[str] = []
    pages = SessionStore.shown_pages
    notify_lines = JsonRpcPeer.notify_lines

    def paged(self: SessionStore, sid: str, first: int = 8, size: int = 64) -> Any:
        assert (first, size) == (8, 64)  # the replay asks for the store's default pages
        for page in pages(self, sid, 2, 3):
            events.append(f"page of {len(page)}")
            yield page

    async def writing(self: JsonRpcPeer, lines: Any) -> None:
        events.append(f"write of {len(lines)}")
        await notify_lines(self, lines)

    monkeypatch.setattr(SessionStore, "shown_pages", paged)
    monkeypatch.setattr(JsonRpcPeer, "notify_lines", writing)
    async with serving(scripted_config(state)) as editor:
        await editor.initialize()
        reply, replayed = await load(editor, session_id, work)
    assert "result" in reply
    # Each page's lines (a prompt chunk and a text chunk per turn; turn 2's prompt has two
    # blocks) went out in one write before the next page was read.
    assert events == [
        "page of 2",
        "write of 4",
        "page of 3",
        "write of 7",
        "page of 2",
        "write of 4",
    ]
    prompts = [u for u in replayed if u["sessionUpdate"] == "user_message_chunk"]
    assert [p["content"].get("text") for p in prompts][:4] == ["turn 0", "turn 1", "turn 2", None]
    assert len(prompts) == TURNS + 1
    assert len(replayed) == 2 * TURNS + 2
    assert replayed[-1]["sessionUpdate"] == "usage_update"  # after the turns (USAGE-006)


@pytest.mark.requirement("PERF-LOAD-003")
async def test_direct_lines_equal_the_wire_models(tmp_path: Path) -> None:
    work, state = tmp_path / "work", tmp_path / "state"
    work.mkdir()
    session_id = await _record(work, state)
    with SessionStore(state) as store:
        items = [item for page in store.shown_pages(session_id) for item in transcript(page)]
    assert len(items) >= TURNS * 2
    lines = ReplayLines(session_id)
    for item in items:
        _check(lines, session_id, item)


@pytest.mark.requirement("PERF-LOAD-003")
def test_every_kind_of_item_has_the_wire_models_lines(tmp_path: Path) -> None:
    """Thoughts, notes, tool calls, compactions (with and without the client capability)."""
    with SessionStore(tmp_path) as store:
        fill(store, 12)
        items = [item for page in store.shown_pages(SID) for item in transcript(page)]
    assert {type(i).__name__ for i in items} >= {
        "AgentThought",
        "StoredToolCall",
        "CompactionRecord",
    }
    for compaction in (True, False):
        lines = ReplayLines(SID, compaction=compaction)
        for item in items:
            _check(lines, SID, item, compaction)


# Any text, lone surrogates included (legal in a Python str, not in UTF-8: `encode` falls
# back to ASCII escapes for such a line, and so must the direct lines).
texts = st.text(st.characters(exclude_categories=()), max_size=30)


@pytest.mark.requirement("PERF-LOAD-003")
@given(texts, texts, st.sampled_from(["text", "thought", "prompt"]))
@example("lone \ud800 surrogate, “é”", "m1", "text")
@example('\n\t\\"\x00\u2028', "é\udc00", "prompt")
def test_direct_lines_equal_the_wire_models_for_any_text(text: str, ident: str, kind: str) -> None:
    item: ReplayItem
    if kind == "text":
        item = AgentText(text, ident or "m")
    elif kind == "thought":
        item = AgentThought(text, ident or "m")
    else:
        item = PromptShown(({"type": "text", "text": text}, {"type": "text", "text": ident}), "u")
    _check(ReplayLines(f"sess_{ident}"), f"sess_{ident}", item)


@pytest.mark.requirement("PERF-LOAD-003")
async def test_a_load_through_the_agent_writes_the_wire_models_lines(tmp_path: Path) -> None:
    """The whole replay of a session of every kind, through the agent (schema-validated by
    the editor), equals the wire models' replay of its transcript, then the usage_update."""
    work = tmp_path / "work"
    work.mkdir()
    with SessionStore(tmp_path) as store:
        fill(store, 12)
        items = [item for page in store.shown_pages(SID) for item in transcript(page)]
    expected = [
        message["params"]["update"]
        for item in items
        for message in _models_lines(SID, item, compaction=False)
    ]
    async with serving(scripted_config(tmp_path)) as editor:
        await editor.initialize()
        reply, replayed = await load(editor, SID, work)
    assert "result" in reply
    assert replayed == expected


@pytest.mark.requirement("PERF-LOAD-004")
@pytest.mark.requirement("PERF-LOAD-005")
@pytest.mark.parametrize("tools", [False, True], ids=["text", "tool-calls-and-usage"])
def test_a_session_loads_without_pydantic_or_the_models(tmp_path: Path, tools: bool) -> None:
    """The real agent in a fresh interpreter: `initialize` and a `session/load` of a text
    session (the usual request, no MCP servers) import neither pydantic nor the ACP models,
    so nothing before the first replayed update waits for them; nor does a session whose
    turns ran tools (a diff, a plan) and kept their usage (PERF-LOAD-005)."""
    probe = f"""
import sys, anyio
sys.path.insert(0, {str(TESTS)!r})
from bridge import running_bridge, scripted_config
from pathlib import Path
from acp_bridge.providers import AssistantTurn, UserTurn
from acp_bridge.sessions import DisplaySegment, Owner, SessionRecord, SessionStore
from acp_bridge.sessions import StoredModelCall, StoredToolCall, TurnState
from acp_bridge.tools import DiffContent, Location, ToolKind
from acp_bridge.turn import ToolStatus

state = Path({str(tmp_path)!r}) / "state"
owner = Owner()
TOOLS = {tools!r}
PLAN = {{"acpBridgePlan": [{{"content": "Write", "priority": "high", "status": "completed"}}]}}
with SessionStore(state) as store:
    store.create(SessionRecord("sess_t", "/w", (), "ask", "scripted", None, 1.0, 1.0), owner)
    for n in range(12):
        start = store.begin_turn("sess_t", owner, [{{"type": "text", "text": f"q{{n}}"}}],
                                 UserTurn((f"q{{n}}",)))
        answer = AssistantTurn(text=f"a{{n}}")
        shown = (DisplaySegment("text", f"{{start.id_prefix}}-m1-a1", f"a{{n}}"),)
        store.add_message("sess_t", start.seq, answer,
                          model_call=StoredModelCall(1, 1, answer, shown))
        if TOOLS:
            prefix = start.id_prefix
            diff = (DiffContent("/w/a.txt", f"new {{n}}", "old"),)
            store.save_tool_call("sess_t", start.seq, StoredToolCall(
                f"{{prefix}}-t1", 1, 1, "Write a.txt", ToolKind.EDIT, ToolStatus.COMPLETED,
                diff, (Location("/w/a.txt", 1),), {{"path": "a.txt"}}, {{"bytes": 5}}))
            store.save_tool_call("sess_t", start.seq, StoredToolCall(
                f"{{prefix}}-t2", 1, 2, "Plan", ToolKind.THINK, ToolStatus.COMPLETED,
                raw_output=PLAN))
        usage = {{"used": 100 + n, "size": 1000, "cost": 0.5, "sizeSource": "config"}}
        store.end_turn("sess_t", start.seq, TurnState.COMPLETED, stop_reason="end_turn",
                       usage=usage if TOOLS else None)
    store.release("sess_t", owner)

HEAVY = ("pydantic", "pydantic_core")

def heavy():
    return sorted(
        m for m in sys.modules if m.split(".")[0] in HEAVY or m.startswith("acp_bridge.protocol")
    )

async def main():
    async with running_bridge(scripted_config(state)) as editor:
        await editor.initialize()
        reply = await editor.request(
            "session/load", {{"sessionId": "sess_t", "cwd": "/w", "mcpServers": []}}
        )
        updates = [m["params"]["update"]["sessionUpdate"] for m in editor.received
                   if m.get("method") == "session/update"]
        kinds = {{k: updates.count(k) for k in sorted(set(updates))}}
        print(repr((sorted(reply["result"]), kinds, heavy())))

anyio.run(main)
"""
    env = {**os.environ, "ACP_SCHEMA_PATH": str(schema_path())}
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    kinds = {"agent_message_chunk": 12, "user_message_chunk": 12}
    if tools:
        kinds.update({"plan": 12, "tool_call": 24, "usage_update": 1})
    expected = (["configOptions", "modes"], dict(sorted(kinds.items())), [])
    assert out.stdout.strip().splitlines()[-1] == repr(expected)
