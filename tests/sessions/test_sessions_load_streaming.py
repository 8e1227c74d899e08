"""session/load streams: turns are read a page at a time, each page written before the next.

Issue 15.3: a long session's replay must not wait for (or hold) the whole session. The store
yields pages of turns; the agent writes a page's updates before it reads the next page, so
the first update leaves after one page whatever the length, and memory holds one page. The
JSON built directly for text chunks and prompts equals the wire models' output.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from bridge import scripted_config
from sessions.sesskit import load, serving

from acp_bridge import protocol as acp
from acp_bridge.agent._replay import replay_params, replay_updates
from acp_bridge.jsonrpc import JsonRpcPeer
from acp_bridge.sessions import SessionStore, transcript

pytestmark = [pytest.mark.anyio, pytest.mark.requirement("PERF-LOAD-001")]

TURNS = 7
PAGE = 3


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


async def test_each_page_is_written_before_the_next_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, state = tmp_path / "work", tmp_path / "state"
    work.mkdir()
    session_id = await _record(work, state)
    events: list[str] = []
    pages = SessionStore.turn_pages
    notify = JsonRpcPeer.notify

    def paged(self: SessionStore, sid: str, page_size: int = 64) -> Any:
        for page in pages(self, sid, PAGE):
            events.append(f"page of {len(page)}")
            yield page

    async def noting(self: JsonRpcPeer, method: str, params: Any = None) -> None:
        if method == "session/update":
            events.append("update")
        await notify(self, method, params)

    monkeypatch.setattr(SessionStore, "turn_pages", paged)
    monkeypatch.setattr(JsonRpcPeer, "notify", noting)
    async with serving(scripted_config(state)) as editor:
        await editor.initialize()
        reply, replayed = await load(editor, session_id, work)
    assert "result" in reply
    page_marks = [i for i, event in enumerate(events) if event.startswith("page")]
    assert [events[i] for i in page_marks] == ["page of 3", "page of 3", "page of 1"]
    # Between two page reads the previous page's updates went out.
    for before, after in itertools.pairwise(page_marks):
        assert "update" in events[before + 1 : after]
    prompts = [u for u in replayed if u["sessionUpdate"] == "user_message_chunk"]
    assert [p["content"].get("text") for p in prompts][:4] == ["turn 0", "turn 1", "turn 2", None]
    assert len(prompts) == TURNS + 1


async def test_direct_json_equals_the_wire_models(tmp_path: Path) -> None:
    work, state = tmp_path / "work", tmp_path / "state"
    work.mkdir()
    session_id = await _record(work, state)
    store = SessionStore(state)
    try:
        items = [item for page in store.turn_pages(session_id) for item in transcript(page)]
    finally:
        store.close()
    assert len(items) >= TURNS * 2
    for item in items:
        expected = [
            acp.to_wire(acp.SessionNotification(session_id=session_id, update=update))
            for update in replay_updates(item)
        ]
        assert replay_params(session_id, item) == expected
