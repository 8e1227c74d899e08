"""Sessions that never outgrow the model (issue 14 item 5): a long session per provider at a
fake model with a small window and its real "context length exceeded" error, `/compact`,
the summarisation call's retries, and `session/load` after compactions.

Every wire message is validated against the official ACP schema (the editor's validator),
compaction updates included.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from bridge import running_bridge, scripted_config
from context_models import WindowedModel, paired, provider_for
from turn.turnkit import FakeProvider, broken, finish, start, text, usage

from acp_bridge.agent._compacting import COMPACT_COMMAND
from acp_bridge.providers import FaultKind, ModelStreamError, Phase
from acp_bridge.turn import SUMMARY_HEADER

pytestmark = pytest.mark.anyio

TURNS = 200
WINDOW = 9_000  # the fake model's window, in its tokens (a body's bytes / 4)
CONFIGURED = 12_000  # what the bridge is told: larger, so the provider's error happens too
NOTES = "".join(
    f"Line {i}: the notes describe part {i} of the project in some detail.\n" for i in range(40)
)
LONG_WAIT = 120.0
CAPS = {"session": {"compaction": {}, "notices": {}}}


async def _initialize(ed: Any, capabilities: dict[str, Any]) -> None:
    await ed.call(
        "initialize",
        {
            "protocolVersion": 1,
            "clientCapabilities": {"fs": {"readTextFile": True}, **capabilities},
        },
    )


def _kinds(updates: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [u for u in updates if u["sessionUpdate"] == kind]


def _messages(kind: str, body: dict[str, Any]) -> list[Any]:
    return list(body["contents"] if kind == "gemini" else body["messages"])


@pytest.mark.requirement("COMPACT-002")
@pytest.mark.requirement("COMPACT-003")
@pytest.mark.requirement("COMPACT-004")
@pytest.mark.requirement("COMPACT-005")
@pytest.mark.parametrize("kind", ["openai", "llama.cpp", "anthropic", "gemini"])
async def test_a_long_session_never_outgrows_a_small_window(tmp_path: Path, kind: str) -> None:
    work = tmp_path / "w"
    work.mkdir()
    (work / "notes.txt").write_text(NOTES)
    async with WindowedModel(kind, window=WINDOW) as model:
        config = scripted_config(
            tmp_path / "s",
            provider_for(kind, model.base_url),
            models=("m",),
            context_window=CONFIGURED,
            commands=(COMPACT_COMMAND,),
        )
        # The load replays 200 turns before it answers: more than the editor's usual bound
        # on a machine shared by many test runs.
        async with running_bridge(config, wait=LONG_WAIT) as ed:
            await _initialize(ed, CAPS)
            session = await ed.new_session(work)
            with anyio.fail_after(600):
                for n in range(TURNS):
                    reply = await ed.prompt(session, f"Question {n}: what do the notes say?")
                    assert reply.get("result", {}).get("stopReason") == "end_turn", reply
            live = ed.updates(session)
        before = model.bodies[-1]
        requests = len(model.bodies)

        # The session outgrew the window many times over, and never failed a prompt.
        sent = sum(len(str(b)) for b in model.bodies) // 4
        assert sent > 20 * WINDOW
        assert model.overflows >= 1  # the provider's own error was met and recovered from
        assert model.summaries >= 5
        for body in model.bodies:
            paired(kind, body)  # every request, summaries and rejected ones included
        assert all(s == 200 for s in model.statuses[-3:])

        # Each compaction: in_progress, its summary chunks, completed with the whole summary.
        updates = _kinds(live, "compaction_update")
        done = [u for u in updates if u["status"] == "completed"]
        assert len(done) == model.summaries
        assert not [u for u in updates if u["status"] == "failed"]
        first = done[0]
        chunks = [
            u["content"]["text"]
            for u in _kinds(live, "compaction_summary_chunk")
            if u["compactionId"] == first["compactionId"]
        ]
        assert "".join(chunks) == first["summary"][0]["text"]
        triggers = {u["_meta"]["acpBridge"]["trigger"] for u in done}
        assert "context_length_exceeded" in triggers

        # A new bridge on the same state: the load replays every compaction, and the next
        # request carries exactly the compacted history the last one had.
        config = scripted_config(
            tmp_path / "s",
            provider_for(kind, model.base_url),
            models=("m",),
            context_window=CONFIGURED,
        )
        async with running_bridge(config, wait=LONG_WAIT) as ed:
            await _initialize(ed, CAPS)
            await ed.call(
                "session/load", {"sessionId": session, "cwd": str(work), "mcpServers": []}
            )
            replayed = _kinds(ed.updates(session), "compaction_update")
            assert [(u["compactionId"], u["summary"]) for u in replayed] == [
                (u["compactionId"], u["summary"]) for u in done
            ]
            reply = await ed.prompt(session, "One more: what do the notes say?")
            assert reply["result"]["stopReason"] == "end_turn"
        after = _messages(kind, model.bodies[requests])
        assert after[: len(_messages(kind, before))] == _messages(kind, before)
        users = [m for m in after if m.get("role") == "user"]
        assert SUMMARY_HEADER in str(users[0])


@pytest.mark.requirement("COMPACT-007")
async def test_compact_on_demand_and_replayed(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    (work / "notes.txt").write_text(NOTES)
    async with WindowedModel("openai", window=100_000) as model:
        config = scripted_config(
            tmp_path / "s",
            provider_for("openai", model.base_url),
            models=("m",),
            commands=(COMPACT_COMMAND,),
        )
        async with running_bridge(config) as ed:
            await _initialize(ed, CAPS)
            session = await ed.new_session(work)
            for n in range(4):
                assert (await ed.prompt(session, f"Q{n}"))["result"]["stopReason"] == "end_turn"
            reply = await ed.prompt(session, "/compact")
            assert reply["result"]["stopReason"] == "end_turn"
            assert (await ed.prompt(session, "Q5"))["result"]["stopReason"] == "end_turn"
            updates = ed.updates(session)
        assert model.summaries == 1
        done = [u for u in _kinds(updates, "compaction_update") if u["status"] == "completed"]
        assert len(done) == 1
        assert done[0]["_meta"]["acpBridge"]["trigger"] == "command"
        said = [u["content"]["text"] for u in _kinds(updates, "agent_message_chunk")]
        assert any(t.startswith("Compacted the conversation") for t in said)
        last = model.bodies[-1]["messages"]
        assert (
            SUMMARY_HEADER in last[1]["content"]
            if isinstance(last[1]["content"], str)
            else str(last[1]["content"])
        )
        assert not any("/compact" in str(m.get("content")) for m in last)  # never model history
        async with running_bridge(config) as ed:
            await _initialize(ed, CAPS)
            await ed.call(
                "session/load", {"sessionId": session, "cwd": str(work), "mcpServers": []}
            )
            replay = ed.updates(session)
        prompts = [u["content"]["text"] for u in _kinds(replay, "user_message_chunk")]
        assert "/compact" in prompts
        assert [u["status"] for u in _kinds(replay, "compaction_update")] == ["completed"]


@pytest.mark.requirement("COMPACT-006")
async def test_a_broken_summary_stream_is_retried_and_its_partial_summary_cleared(
    tmp_path: Path,
) -> None:
    provider = FakeProvider(
        [start(), *text("First answer."), usage(100, 10), finish()],
        [start(), *text("Second answer."), usage(100, 10), finish()],
        [start(), *text("Third answer."), usage(900, 10), finish()],  # past 0.8 of 1000
        [start(), *text("The user asked th"), broken()],  # the summary breaks mid-way
        [start(), *text("The user asked three things."), usage(50, 10), finish()],
        [start(), *text("Fourth answer."), usage(200, 10), finish()],
    )
    config = scripted_config(tmp_path / "s", provider, context_window=1000, compaction_keep_turns=1)
    async with running_bridge(config) as ed:
        await _initialize(ed, CAPS)
        session = await ed.new_session(tmp_path)
        for prompt in ("one", "two", "three", "four"):
            assert (await ed.prompt(session, prompt))["result"]["stopReason"] == "end_turn"
        updates = [
            u
            for u in ed.updates(session)
            if u["sessionUpdate"] in ("compaction_update", "compaction_summary_chunk")
        ]
    shapes = [
        (
            u["sessionUpdate"],
            u.get("status"),
            u.get("summary"),
            u.get("content", {}).get("text"),
            (u.get("_meta") or {}).get("reset"),
        )
        for u in updates
    ]
    cid = updates[0]["compactionId"]
    assert all(u["compactionId"] == cid for u in updates)
    assert shapes[0][:2] == ("compaction_update", "in_progress")
    assert shapes[1] == ("compaction_summary_chunk", None, None, "The user asked th", None)
    assert shapes[2] == ("compaction_update", "in_progress", [], None, None)  # cleared
    assert shapes[3][3] == "The user asked three things."
    assert shapes[3][4] is True  # the new attempt's first chunk resets, like a message
    assert updates[3]["_meta"]["attempt"] == 2
    assert shapes[-1][:2] == ("compaction_update", "completed")
    assert updates[-1]["summary"] == [{"type": "text", "text": "The user asked three things."}]
    fourth = provider.requests[-1]
    first = fourth.messages[0]
    assert first.parts[0].startswith(SUMMARY_HEADER)
    assert "The user asked three things." in first.parts[0]
    assert "The user asked th\n" not in first.parts[0]


@pytest.mark.requirement("COMPACT-004")
async def test_clients_without_the_capability_get_a_notice_not_the_updates(
    tmp_path: Path,
) -> None:
    provider = FakeProvider(
        [start(), *text("One."), usage(100, 10), finish()],
        [start(), *text("Two."), usage(900, 10), finish()],
        [start(), *text("A summary."), finish()],
        [start(), *text("Three."), usage(100, 10), finish()],
    )
    config = scripted_config(tmp_path / "s", provider, context_window=1000, compaction_keep_turns=1)
    async with running_bridge(config) as ed:
        await _initialize(ed, {"session": {"notices": {}}})
        session = await ed.new_session(tmp_path)
        for prompt in ("one", "two", "three"):
            assert (await ed.prompt(session, prompt))["result"]["stopReason"] == "end_turn"
        updates = ed.updates(session)
    assert not _kinds(updates, "compaction_update")
    assert not _kinds(updates, "compaction_summary_chunk")
    notices = [
        n for n in _kinds(updates, "notice") if n["_meta"]["acpBridge"]["kind"] == "compaction"
    ]
    assert len(notices) == 1
    assert notices[0]["title"].startswith("Compacted the conversation")


@pytest.mark.requirement("COMPACT-001")
@pytest.mark.requirement("COMPACT-002")
async def test_an_overflow_that_cannot_be_compacted_ends_the_turn_unretried(
    tmp_path: Path,
) -> None:
    overflow = ModelStreamError(
        FaultKind.CONTEXT_LENGTH_EXCEEDED,
        "openai answered HTTP 400: This model's maximum context length is 100 tokens.",
        phase=Phase.CONNECT,
        status=400,
        provider_code="invalid_request_error",
        context=(500, 100),
    )
    provider = FakeProvider([overflow])
    async with running_bridge(scripted_config(tmp_path / "s", provider)) as ed:
        await _initialize(ed, CAPS)
        session = await ed.new_session(tmp_path)
        reply = await ed.prompt(session, "a prompt far too long on its own")
        updates = ed.updates(session)
    assert reply["error"]["code"] == -32603
    data = reply["error"]["data"]
    assert (data["reason"], data["giveUp"], data["attempts"]) == (
        "context_length_exceeded",
        "not_retryable",
        1,
    )
    assert reply["error"]["message"].startswith("The request does not fit the model's context")
    assert len(provider.requests) == 1  # never sent again as it was
    assert not _kinds(updates, "compaction_update")  # nothing older to summarise
