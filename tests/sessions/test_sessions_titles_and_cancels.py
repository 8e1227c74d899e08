"""What a session keeps of its commands and of its cancelled prompts (issue 14's real-model
try): `/compact` never titles a session, and a prompt cancelled before any reply replays as
its own user message, with the model history kept as each provider needs.

In-memory pairs; every wire message the bridge writes is validated against the official ACP
schema (the editor's validator).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import anyio
import pytest
from bridge import running_bridge, scripted_config
from context_models import WindowedModel, provider_for
from turn.turnkit import FakeProvider, Hold, finish, start, text, usage

from acp_bridge.agent._compacting import COMPACT_COMMAND
from acp_bridge.agent._ending import CANCELLED_NOTE
from acp_bridge.providers import UserTurn
from acp_bridge.turn import NO_REPLY

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


async def _cancel_the_first_prompt(ed: Any, session: str, hold: Hold) -> None:
    """Sends a prompt and cancels it while the model has not answered yet."""
    replies: list[dict[str, Any]] = []
    async with anyio.create_task_group() as tg:

        async def prompt() -> None:
            replies.append(await ed.prompt(session, "first question"))

        tg.start_soon(prompt)
        with anyio.fail_after(30):
            await hold.reached.wait()
        await ed.notify("session/cancel", {"sessionId": session})
    assert replies[0]["result"]["stopReason"] == "cancelled"


def _roles(kind: str, body: dict[str, Any]) -> list[str]:
    if kind == "gemini":
        return [c["role"] for c in body["contents"]]
    return [m["role"] for m in body["messages"] if m["role"] != "system"]


@pytest.mark.requirement("SESS-CANCEL-001")
@pytest.mark.parametrize("kind", ["openai", "anthropic", "gemini"])
async def test_a_prompt_cancelled_before_any_reply_replays_as_its_own_message(
    tmp_path: Path, kind: str
) -> None:
    (tmp_path / "notes.txt").write_text("The notes.\n")
    hold = Hold()
    provider = FakeProvider(
        [start(), hold],  # cancelled here: nothing shown
        [start(), *text("Two."), usage(10, 5), finish()],
    )
    state = tmp_path / "s"
    async with running_bridge(scripted_config(state, provider)) as ed:
        await ed.initialize()
        session = await ed.new_session(tmp_path)
        await _cancel_the_first_prompt(ed, session, hold)
        assert (await ed.prompt(session, "second question"))["result"]["stopReason"] == "end_turn"
    # The model was sent both prompts as one user turn, the first marked as unanswered.
    sent = provider.requests[-1].messages
    assert sent == (UserTurn(("first question", NO_REPLY, "second question")),)

    async with WindowedModel(kind, window=100_000) as model:
        config = scripted_config(state, provider_for(kind, model.base_url), models=("m",))
        async with running_bridge(config) as ed:
            await ed.initialize()
            load = {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
            await ed.call("session/load", load)
            replay = [
                (u["sessionUpdate"], u["content"]["text"])
                for u in ed.updates(session)
                if u["sessionUpdate"] in ("user_message_chunk", "agent_message_chunk")
            ]
            assert (await ed.prompt(session, "third question"))["result"]["stopReason"] == (
                "end_turn"
            )
    # Each prompt is its own user message: the cancelled one closes with a note.
    assert replay == [
        ("user_message_chunk", "first question"),
        ("agent_message_chunk", CANCELLED_NOTE),
        ("user_message_chunk", "second question"),
        ("agent_message_chunk", "Two."),
    ]
    # After the restart each provider is sent alternating roles, every prompt in it.
    body = model.bodies[0]
    roles = _roles(kind, body)
    assert roles[:3] == ["user", "assistant" if kind != "gemini" else "model", "user"]
    assert all(a != b for a, b in itertools.pairwise(roles))
    for words in ("first question", "second question", "third question", NO_REPLY):
        assert words in str(body)
