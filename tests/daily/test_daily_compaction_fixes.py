"""Compaction defects the real-model try found (issue 14): the budget of a loaded session and
of a growing turn, the replayed compaction_update, the usage after a compaction, the summary
call's billing and its waiting.

In-memory pairs with a scripted provider; every wire message the bridge writes is validated
against the official ACP schema (the editor's validator).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from bridge import running_bridge, scripted_config
from turn.turnkit import FakeProvider, Hold, broken, finish, start, text, tool_call, usage

from acp_bridge.providers import FaultKind, FinishReason, ModelStreamError, Phase, Usage
from acp_bridge.turn import SUMMARY_SYSTEM, RetryPolicy

pytestmark = pytest.mark.anyio

CAPS = {"session": {"compaction": {}, "notices": {}}}


async def initialize(ed: Any, capabilities: dict[str, Any] = CAPS) -> None:
    await ed.call("initialize", {"protocolVersion": 1, "clientCapabilities": capabilities})


def kinds(updates: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [u for u in updates if u["sessionUpdate"] == kind]


def load_params(session: str, cwd: Path) -> dict[str, Any]:
    return {"sessionId": session, "cwd": str(cwd), "mcpServers": []}


def answer(words: str, tokens: int = 300) -> list[Any]:
    return [start(), *text(words), usage(tokens, 10), finish()]


def summaries(provider: FakeProvider) -> list[int]:
    """The positions of the summary requests among the provider's requests."""
    return [i for i, r in enumerate(provider.requests) if r.system == SUMMARY_SYSTEM]


@pytest.mark.requirement("COMPACT-010")
async def test_the_first_turn_after_a_load_counts_the_system_prompt_and_tools(
    tmp_path: Path,
) -> None:
    provider = FakeProvider(
        answer("One."),
        answer("Two."),
        answer("A summary of one and two."),  # after the load: compacted first
        answer("Three."),
    )
    state = tmp_path / "s"
    config = scripted_config(state, provider, context_window=4_000, compaction_keep_turns=1)
    async with running_bridge(config) as ed:
        await initialize(ed)
        session = await ed.new_session(tmp_path)
        for prompt in ("one", "two"):
            assert (await ed.prompt(session, prompt))["result"]["stopReason"] == "end_turn"
    assert summaries(provider) == []  # 310 tokens in use: far from 0.8 of the window
    # The next run of the bridge adds instructions: ~2 500 tokens with the tool definitions
    # (~1 000) and the history; the kept usage (310) no longer says what a request carries.
    instructions = "Follow the house rules for every change you make. " * 200
    config = scripted_config(
        state,
        provider,
        context_window=4_000,
        compaction_keep_turns=1,
        append_system_prompt=instructions,
    )
    async with running_bridge(config) as ed:
        await initialize(ed)
        await ed.call("session/load", load_params(session, tmp_path))
        assert (await ed.prompt(session, "three"))["result"]["stopReason"] == "end_turn"
        updates = ed.updates(session)
    assert summaries(provider) == [2]  # before the turn's model call
    done = [u for u in kinds(updates, "compaction_update") if u["status"] == "completed"]
    assert [u["_meta"]["acpBridge"]["trigger"] for u in done] == ["threshold"]
    assert instructions.strip() in (provider.requests[3].system or "")


@pytest.mark.requirement("COMPACT-010")
async def test_a_tool_round_that_grows_the_context_compacts_before_the_next_call(
    tmp_path: Path,
) -> None:
    (tmp_path / "big.txt").write_text("A line of the big file, read by the model.\n" * 300)
    provider = FakeProvider(
        answer("One."),
        [
            start(),
            *tool_call("c1", "read_file", {"path": "big.txt"}),
            usage(400, 10),  # 410 in use before the file's ~3 000 tokens enter the history
            finish(FinishReason.TOOL_CALLS),
        ],
        answer("A summary of turn one."),
        answer("The file is long."),
    )
    config = scripted_config(tmp_path / "s", provider, context_window=4_000)
    async with running_bridge(config) as ed:
        await initialize(ed)
        session = await ed.new_session(tmp_path)
        assert (await ed.prompt(session, "one"))["result"]["stopReason"] == "end_turn"
        assert (await ed.prompt(session, "read big.txt"))["result"]["stopReason"] == "end_turn"
        updates = ed.updates(session)
    assert summaries(provider) == [2]  # between the tool round and the turn's second call
    done = [u for u in kinds(updates, "compaction_update") if u["status"] == "completed"]
    assert len(done) == 1
    last = provider.requests[3].messages
    assert "A line of the big file" in str(last[-1])  # the round was kept whole


@pytest.mark.requirement("COMPACT-009")
async def test_the_replayed_compaction_update_equals_the_live_one(tmp_path: Path) -> None:
    provider = FakeProvider(
        answer("One.", 100),
        answer("Two.", 900),  # past 0.8 of 1 000: the next turn compacts first
        answer("A summary."),
        answer("Three.", 100),
    )
    state = tmp_path / "s"
    config = scripted_config(state, provider, context_window=1_000, compaction_keep_turns=1)
    async with running_bridge(config) as ed:
        await initialize(ed)
        session = await ed.new_session(tmp_path)
        for prompt in ("one", "two", "three"):
            assert (await ed.prompt(session, prompt))["result"]["stopReason"] == "end_turn"
        live = [u for u in kinds(ed.updates(session), "compaction_update")]
    async with running_bridge(config) as ed:
        await initialize(ed)
        await ed.call("session/load", load_params(session, tmp_path))
        replayed = kinds(ed.updates(session), "compaction_update")
    done = [u for u in live if u["status"] == "completed"]
    assert len(done) == 1
    assert done[0]["_meta"]["acpBridge"]["summarised"] > 0
    assert replayed == done  # every field, `_meta.acpBridge.summarised` included


@pytest.mark.requirement("COMPACT-011")
@pytest.mark.requirement("COMPACT-012")
async def test_a_compaction_is_followed_by_a_usage_update_billing_the_summary(
    tmp_path: Path,
) -> None:
    provider = FakeProvider(
        [start(), *text("One."), Usage(100, 10, cost=0.01), finish()],
        [start(), *text("Two."), Usage(900, 10, cost=0.01), finish()],
        [start(), Usage(60, 0), *text("The user as"), broken()],  # billed, then abandoned
        [start(), *text("The user asked two things."), Usage(70, 20, cost=0.002), finish()],
        [start(), *text("Three."), Usage(150, 10, cost=0.01), finish()],
    )
    config = scripted_config(
        tmp_path / "s", provider, context_window=1_000, compaction_keep_turns=1
    )
    async with running_bridge(config) as ed:
        await initialize(ed)
        session = await ed.new_session(tmp_path)
        for prompt in ("one " * 400, "two " * 400, "three"):  # the history is the bulk
            assert (await ed.prompt(session, prompt))["result"]["stopReason"] == "end_turn"
        updates = ed.updates(session)
    done = next(
        i
        for i, u in enumerate(updates)
        if u["sessionUpdate"] == "compaction_update" and u["status"] == "completed"
    )
    after = updates[done + 1]
    assert after["sessionUpdate"] == "usage_update"  # COMPACT-011: right after it
    meta = after["_meta"]["acpBridge"]
    assert meta["compactionId"] == updates[done]["compactionId"]
    assert meta["estimated"] is True
    assert 0 < after["used"] < 910  # the compacted history, estimated
    assert after["size"] == 1_000
    # COMPACT-012: the summary call was billed (both attempts), never counted as context.
    assert meta["kept"] is None
    assert (meta["billed"]["input"], meta["billed"]["output"]) == (130, 20)
    assert [(a["attempt"], a["state"]) for a in meta["attempts"]] == [
        (1, "abandoned"),
        (2, "completed"),
    ]
    assert after["cost"] == {"amount": pytest.approx(0.022), "currency": "USD"}
    usages = kinds(updates, "usage_update")
    assert usages[-1]["used"] == 160  # the next call's usage replaces the estimate
    assert usages[-1]["cost"]["amount"] == pytest.approx(0.032)


def _overflow() -> ModelStreamError:
    return ModelStreamError(
        FaultKind.CONTEXT_LENGTH_EXCEEDED,
        "openai answered HTTP 400: This model's maximum context length is 1000 tokens.",
        phase=Phase.CONNECT,
        status=400,
        context=(1_200, 1_000),
    )


@pytest.mark.requirement("COMPACT-013")
@pytest.mark.parametrize("trigger", ["threshold", "context_length_exceeded"])
async def test_a_summary_from_a_dead_provider_is_bounded_by_max_wait(
    tmp_path: Path, trigger: str
) -> None:
    stalled = Hold()  # the summary stream opens, then nothing: never released
    second = [start(), *text("Two."), usage(900 if trigger == "threshold" else 100, 10), finish()]
    scripts: list[list[Any]] = [answer("One.", 100), second]
    if trigger == "context_length_exceeded":
        scripts.append([_overflow()])
    scripts.append([start(), stalled])
    provider = FakeProvider(*scripts)
    policy = RetryPolicy(base_delay=0.001, max_delay=0.002, max_wait=1.0, stall_notice_after=None)
    config = scripted_config(
        tmp_path / "s",
        provider,
        context_window=1_000,
        compaction_keep_turns=1,
        retry_policy=policy,
    )
    async with running_bridge(config) as ed:
        await initialize(ed)
        session = await ed.new_session(tmp_path)
        for prompt in ("one", "two"):
            assert (await ed.prompt(session, prompt))["result"]["stopReason"] == "end_turn"
        with anyio.fail_after(60):  # unbounded before: the summary waited for ever
            reply = await ed.prompt(session, "three")
        updates = ed.updates(session)
    assert stalled.reached.is_set()
    assert reply["error"]["code"] == -32603
    assert reply["error"]["data"]["giveUp"] == "max_wait_exceeded"
    assert "max_wait" in reply["error"]["message"]
    shown = [u["status"] for u in kinds(updates, "compaction_update")]
    assert shown == ["in_progress", "failed"]
