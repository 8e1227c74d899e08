"""session/load holds a page of turns, not the session (issue 15.3).

The replay reads what the stored turns showed a page at a time (PERF-LOAD-001); the model history,
which the whole session makes up, is not read by the load at all: the session's first prompt reads
it, as it stood when the session was loaded (the prompt's own turn, stored just before, is
not read twice).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bridge import RecordingProvider, scripted_config
from sessions.sesskit import load, serving

from acp_bridge.providers import Message, UserTurn
from acp_bridge.sessions import SessionStore

pytestmark = pytest.mark.anyio

TURNS = 5


@pytest.mark.requirement("PERTURN-005")
async def test_the_load_reads_pages_and_the_first_prompt_reads_the_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, state = tmp_path / "work", tmp_path / "state"
    work.mkdir()
    async with serving(scripted_config(state)) as editor:
        await editor.initialize()
        session_id = await editor.new_session(work)
        for n in range(TURNS):
            await editor.prompt(session_id, f"turn {n}")
    events: list[str] = []
    history = SessionStore.history
    pages = SessionStore.shown_pages

    def reading(self: SessionStore, sid: str, **kwargs: Any) -> list[Message]:
        found = history(self, sid, **kwargs)
        events.append(f"history of {len(found)}")
        return found

    def paged(self: SessionStore, sid: str, first: int = 8, size: int = 64) -> Any:
        for page in pages(self, sid, 2, 2):
            events.append(f"page of {len(page)}")
            yield page

    monkeypatch.setattr(SessionStore, "history", reading)
    monkeypatch.setattr(SessionStore, "shown_pages", paged)
    provider = RecordingProvider()
    async with serving(scripted_config(state, provider)) as editor:
        await editor.initialize()
        reply, replayed = await load(editor, session_id, work)
        assert "result" in reply
        chunks = [u for u in replayed if u["sessionUpdate"].endswith("_message_chunk")]
        assert len(chunks) == 2 * TURNS
        assert events == ["page of 2", "page of 2", "page of 1"]  # no history read
        await editor.prompt(session_id, "one more")
    assert events[3:] == [f"history of {2 * TURNS}"]
    (request,) = provider.requests
    users = [m for m in request.messages if isinstance(m, UserTurn)]
    assert [u.parts for u in users] == [(f"turn {n}",) for n in range(TURNS)] + [("one more",)]
