"""The first slice of the agent surface over an in-memory pair (initialize, sessions, prompt)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bridge import running_bridge, scripted_config

pytestmark = pytest.mark.anyio


async def test_initialize_new_prompt(tmp_path: Path) -> None:
    async with running_bridge(scripted_config(tmp_path / "state")) as editor:
        init = await editor.initialize()
        assert init["protocolVersion"] == 1
        assert init["agentInfo"]["name"] == "acp-bridge"
        session_id = await editor.new_session(tmp_path)
        reply = await editor.prompt(session_id, "hello there")
        assert reply["result"]["stopReason"] == "end_turn"
        texts = [
            u["content"]["text"]
            for u in editor.updates(session_id)
            if u["sessionUpdate"] == "agent_message_chunk"
        ]
        assert "".join(texts)
