"""Compaction without I/O: what is summarised, what is kept whole, the history after it, and
the same history read back from the session store (COMPACT-003, COMPACT-005)."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from acp_bridge.cli._run import build_config
from acp_bridge.cli._settings import SettingsError, resolve
from acp_bridge.providers import (
    AssistantTurn,
    Message,
    ToolCall,
    ToolResult,
    ToolResults,
    UserTurn,
)
from acp_bridge.sessions import Owner, SessionRecord, SessionStore, TurnState
from acp_bridge.turn import (
    SUMMARY_HEADER,
    CompactionRecord,
    compacted_history,
    estimate_tokens,
    plan_compaction,
    repair_history,
)


def _round(n: int, calls: int = 1, size: int = 10) -> list[Message]:
    tool_calls = tuple(
        ToolCall(f"c{n}-{i}", "read_file", {"path": f"f{n}-{i}"}) for i in range(calls)
    )
    return [
        AssistantTurn(f"reading {n}", tool_calls=tool_calls),
        ToolResults(tuple(ToolResult(c.call_id, c.name, "x" * size) for c in tool_calls)),
    ]


def _turn(n: int, rounds: int = 1, size: int = 10) -> list[Message]:
    messages: list[Message] = [UserTurn((f"prompt {n}",))]
    for r in range(rounds):
        messages += _round(n * 100 + r, calls=1 + r % 2, size=size)
    messages.append(AssistantTurn(f"answer {n}"))
    return messages


def _assert_paired_and_alternating(history: list[Message]) -> None:
    repaired, dropped = repair_history(history)
    assert dropped == []
    assert repaired == history, "the history was not paired 1:1"
    assert isinstance(history[0], UserTurn)
    for before, after in itertools.pairwise(history):
        assert not (isinstance(before, UserTurn) and isinstance(after, UserTurn))


@pytest.mark.requirement("COMPACT-003")
def test_the_last_turns_are_kept_whole_and_the_summary_leads() -> None:
    history = [m for n in range(6) for m in _turn(n, rounds=2)]
    plan = plan_compaction(history, keep_turns=2, budget=10_000)
    assert plan is not None
    kept = history[len(history) - plan.kept :]
    assert kept == _turn(4, rounds=2) + _turn(5, rounds=2)
    assert list(plan.older) == history[: len(history) - plan.kept]
    after = compacted_history("They read files.", kept)
    first = after[0]
    assert isinstance(first, UserTurn)
    assert first.parts[0].startswith(SUMMARY_HEADER)
    assert "They read files." in first.parts[0]
    assert first.parts[1:] == ("prompt 4",)  # merged ahead of the kept prompt
    assert after[1:] == kept[1:]
    _assert_paired_and_alternating(after)


@pytest.mark.requirement("COMPACT-003")
def test_an_oversized_current_turn_is_cut_between_rounds_never_inside_one() -> None:
    history = [*_turn(0), UserTurn(("big task",))]
    for r in range(8):
        history += _round(r, calls=2, size=2_000)
    plan = plan_compaction(history, keep_turns=2, budget=2_500)
    assert plan is not None
    kept = history[len(history) - plan.kept :]
    assert isinstance(kept[0], AssistantTurn)  # the start of a round
    assert estimate_tokens(kept) <= 2_500
    after = compacted_history("s", kept)
    assert isinstance(after[0], UserTurn)
    assert isinstance(after[1], AssistantTurn)
    _assert_paired_and_alternating(after)


@pytest.mark.requirement("COMPACT-003")
def test_nothing_to_summarise() -> None:
    assert plan_compaction([], keep_turns=2, budget=10) is None
    assert plan_compaction([UserTurn(("hi",))], keep_turns=2, budget=0) is None
    # One turn of one round: only the prompt can be summarised, the round stays.
    plan = plan_compaction(_turn(0)[:3], keep_turns=2, budget=0)
    assert plan is not None
    assert plan.kept == 2


@pytest.mark.requirement("COMPACT-003")
def test_random_histories_compacted_again_and_again_stay_paired() -> None:
    rng = random.Random(14)
    history: list[Message] = []
    for n in range(300):
        history += _turn(n, rounds=rng.randrange(0, 4), size=rng.randrange(10, 3_000))
        if estimate_tokens(history) > 4_000:
            plan = plan_compaction(history, keep_turns=rng.randrange(1, 4), budget=1_600)
            assert plan is not None
            history[:] = compacted_history(f"summary {n}", history[len(history) - plan.kept :])
            _assert_paired_and_alternating(history)
    _assert_paired_and_alternating(history)


@pytest.mark.requirement("COMPACT-005")
def test_the_store_reads_back_the_compacted_history() -> None:
    store = SessionStore.in_memory()
    record = SessionRecord("s1", "/w", (), "ask", "m", None, 0.0, 0.0)
    owner = Owner()
    store.create(record, owner)
    live: list[Message] = []
    for n in range(5):
        turn = _turn(n, rounds=1)
        start = store.begin_turn("s1", owner, [{"type": "text", "text": f"prompt {n}"}], turn[0])
        live.append(turn[0])
        for message in turn[1:]:
            store.add_message("s1", start.seq, message)
            live.append(message)
        if n in (2, 4):
            plan = plan_compaction(live, keep_turns=1, budget=10_000)
            assert plan is not None
            compaction = CompactionRecord(f"c{n}", f"summary {n}", plan.kept, "threshold", 2)
            store.add_compaction("s1", start.seq, compaction)
            live[:] = compacted_history(compaction.summary, live[len(live) - plan.kept :])
        assert store.history("s1") == live
        store.end_turn("s1", start.seq, TurnState.COMPLETED)
    turns = store.turns("s1")
    assert [t.compactions for t in turns][2][0].summary == "summary 2"
    assert [m for t in turns for m in t.messages if not isinstance(m, UserTurn)]  # unchanged rows
    # A command turn stores no prompt message.
    start = store.begin_turn("s1", owner, [{"type": "text", "text": "/compact"}], None)
    assert store.history("s1") == live
    store.end_turn("s1", start.seq, TurnState.COMPLETED)
    store.close()


@pytest.mark.requirement("COMPACT-008")
@pytest.mark.requirement("COMPACT-007")
def test_the_compaction_settings_resolve_like_every_other(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("compaction_threshold = 0.5\ncompaction_keep_turns = 3\n")
    from_file = resolve({}, {}, str(config))
    assert (from_file.compaction_threshold, from_file.compaction_keep_turns) == (0.5, 3)
    env = {"ACP_BRIDGE_COMPACTION_THRESHOLD": "0.6", "ACP_BRIDGE_COMPACTION_KEEP_TURNS": "4"}
    from_env = resolve({}, env, str(config))
    assert (from_env.compaction_threshold, from_env.compaction_keep_turns) == (0.6, 4)
    flags = {"compaction_threshold": 0.0, "compaction_keep_turns": 1}
    from_flags = resolve(flags, env, str(config))
    assert (from_flags.compaction_threshold, from_flags.compaction_keep_turns) == (0.0, 1)
    assert from_flags.sources["compaction_threshold"] == "flag"
    with pytest.raises(SettingsError, match="is not a number from 0 to 1"):
        resolve({}, {"ACP_BRIDGE_COMPACTION_THRESHOLD": "1.5"}, "/dev/null")
    with pytest.raises(SettingsError, match="must be at least 1"):
        resolve({"compaction_keep_turns": 0}, {}, "/dev/null")
    built = build_config(from_flags)
    assert (built.compaction_threshold, built.compaction_keep_turns) == (0.0, 1)
    assert built.commands[0].name == "compact"  # offered for every provider
    defaults = build_config(resolve({}, {}, "/dev/null"))
    assert (defaults.compaction_threshold, defaults.compaction_keep_turns) == (0.8, 2)
