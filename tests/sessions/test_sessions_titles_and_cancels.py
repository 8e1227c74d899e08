"""What a session keeps of its commands and of its cancelled prompts (issue 14's real-model
try): `/compact` never titles a session, and a prompt cancelled before any reply replays as
its own user message, with the model history kept as each provider needs.

In-memory pairs; every wire message the bridge writes is validated against the official ACP
schema (the editor's validator).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bridge import running_bridge, scripted_config
from turn.turnkit import FakeProvider, finish, start, text, usage

from acp_bridge.agent._compacting import COMPACT_COMMAND

pytestmark = pytest.mark.anyio


def titles(updates: list[dict[str, Any]]) -> list[Any]:
    return [u.get("title") for u in updates if u["sessionUpdate"] == "session_info_update"]


@pytest.mark.requirement("SESS-TITLE-001")
async def test_compact_never_titles_a_session_the_first_real_prompt_does(
    tmp_path: Path,
) -> None:
    provider = FakeProvider([start(), *text("Hello."), usage(10, 5), finish()])
    config = scripted_config(tmp_path / "s", provider, commands=(COMPACT_COMMAND,))
    async with running_bridge(config) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        assert (await ed.prompt(session, "/compact"))["result"]["stopReason"] == "end_turn"
        assert titles(ed.updates(session)) == []
        listed = (await ed.call("session/list", {}))["sessions"]
        assert [s.get("title") for s in listed] == [None]
        assert (await ed.prompt(session, "fix the parser"))["result"]["stopReason"] == "end_turn"
        assert titles(ed.updates(session)) == ["fix the parser"]
        listed = (await ed.call("session/list", {}))["sessions"]
        assert [s.get("title") for s in listed] == ["fix the parser"]
