"""The prompt response reports the compaction summary calls' attempts (COMPACT-014).

A summary call is no model call of the turn, so `attempts` / `billedAttempts` stay the model
calls'; `_meta.acpBridge.compactions` lists every summary call with each attempt the provider
was sent, whether the compaction completed or failed. In-memory pairs with a scripted provider;
every wire message the bridge writes is validated against the official ACP schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bridge import running_bridge, scripted_config
from daily.test_daily_compaction_fixes import initialize, kinds
from turn.turnkit import FakeProvider, broken, finish, start, text

from acp_bridge.agent._compacting import COMPACT_COMMAND
from acp_bridge.providers import Usage
from acp_bridge.turn import SUMMARY_SYSTEM

pytestmark = pytest.mark.anyio


def _answer(words: str, tokens: int) -> list[Any]:
    return [start(), *text(words), Usage(tokens, 10), finish()]


def _sent(provider: FakeProvider) -> tuple[int, int]:
    """(summary requests, other requests) the provider was sent."""
    summaries = sum(1 for r in provider.requests if r.system == SUMMARY_SYSTEM)
    return summaries, len(provider.requests) - summaries


async def _prompts(tmp_path: Path, provider: FakeProvider, prompts: list[str]) -> Any:
    config = scripted_config(
        tmp_path / "s",
        provider,
        context_window=1_000,
        compaction_keep_turns=1,
        commands=(COMPACT_COMMAND,),
    )
    async with running_bridge(config) as ed:
        await initialize(ed)
        session = await ed.new_session(tmp_path)
        replies = [await ed.prompt(session, p) for p in prompts]
        return replies, ed.updates(session)


@pytest.mark.requirement("COMPACT-014")
async def test_a_threshold_compaction_reports_its_summary_attempts(tmp_path: Path) -> None:
    provider = FakeProvider(
        _answer("One.", 100),
        _answer("Two.", 900),  # 910 of 1 000 in use: the next call compacts first
        [start(), Usage(60, 0), *text("The user as"), broken()],  # billed, then abandoned
        _answer("The user asked two things.", 70),
        _answer("Three.", 150),
    )
    replies, updates = await _prompts(tmp_path, provider, ["one " * 400, "two " * 400, "three"])
    meta = replies[2]["result"]["_meta"]["acpBridge"]
    assert "compactions" not in replies[0]["result"]["_meta"]["acpBridge"]  # none made
    # The turn's own model call: one attempt, as before.
    assert (meta["modelCalls"], meta["billedAttempts"], len(meta["attempts"])) == (1, 1, 1)
    done = next(u for u in kinds(updates, "compaction_update") if u["status"] == "completed")
    billed = next(
        u for u in kinds(updates, "usage_update") if "compactionId" in u["_meta"]["acpBridge"]
    )
    assert meta["compactions"] == [
        {
            "compactionId": done["compactionId"],
            "trigger": "threshold",
            "modelCall": 1,
            "billedAttempts": 2,
            "attempts": [
                {
                    "attempt": a["attempt"],
                    "state": a["state"],
                    "reason": reason,
                    "billed": a["billed"],
                    "usage": a["usage"],
                }
                for a, reason in zip(
                    billed["_meta"]["acpBridge"]["attempts"],
                    ["stream_interrupted", None],
                    strict=True,
                )
            ],
        }
    ]
    assert [a["usage"]["input"] for a in meta["compactions"][0]["attempts"]] == [60, 70]
    # Every request the provider was sent is in the responses.
    summaries, calls = _sent(provider)
    assert summaries == sum(len(c["attempts"]) for c in meta["compactions"])
    assert calls == sum(len(r["result"]["_meta"]["acpBridge"]["attempts"]) for r in replies)


@pytest.mark.requirement("COMPACT-014")
async def test_compact_and_a_failed_summary_report_their_attempts(tmp_path: Path) -> None:
    provider = FakeProvider(
        _answer("One.", 100),
        _answer("Two.", 100),
        _answer("The user asked two things.", 70),  # /compact's summary
        _answer("Three.", 100),
        _answer("Four.", 900),  # the next call compacts first, and its summary fails
        [start(), Usage(50, 0), *text("Partial"), broken()],
        [start(), Usage(40, 0), broken()],
        [start(), Usage(30, 0), broken()],
        [start(), Usage(20, 0), broken()],
        _answer("Five.", 100),
    )
    prompts = ["one", "two", f"/{COMPACT_COMMAND.name}", "three", "four " * 400, "five"]
    replies, updates = await _prompts(tmp_path, provider, prompts)
    command = replies[2]["result"]["_meta"]["acpBridge"]
    assert (command["modelCalls"], command["billedAttempts"], command["attempts"]) == (0, 0, [])
    [made] = command["compactions"]
    assert (made["trigger"], made["modelCall"], made["billedAttempts"]) == ("command", None, 1)
    assert [(a["state"], a["reason"]) for a in made["attempts"]] == [("completed", None)]
    # A failed compaction was billed all the same: its four attempts are reported.
    assert [u["status"] for u in kinds(updates, "compaction_update")][-2:] == [
        "in_progress",
        "failed",
    ]
    after = replies[5]["result"]["_meta"]["acpBridge"]
    [failed] = after["compactions"]
    assert (failed["trigger"], failed["modelCall"], failed["billedAttempts"]) == ("threshold", 1, 4)
    assert [(a["state"], a["reason"], a["usage"]["input"]) for a in failed["attempts"]] == [
        ("abandoned", "stream_interrupted", n) for n in (50, 40, 30, 20)
    ]
    summaries, calls = _sent(provider)
    assert summaries == sum(
        len(c["attempts"])
        for r in replies
        for c in r["result"]["_meta"]["acpBridge"].get("compactions", [])
    )
    assert calls == sum(len(r["result"]["_meta"]["acpBridge"]["attempts"]) for r in replies)
