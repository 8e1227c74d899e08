"""What session/load reads from the store: a page of what turns showed, never the conversation.

Issue 15.3. `SessionStore.shown_pages` reads each turn's prompt, display segments, tool calls,
compactions and note (PERF-LOAD-002): its transcript equals the one of the full turn rows, a
page costs three range queries served by the turn indexes of schema 6, the bodies of the
kept messages are never read (a session of large tool results replays in the memory of one
page), and the first page is small so the first update waits for a few turns only.
"""

from __future__ import annotations

import sqlite3
import tracemalloc
from pathlib import Path

import pytest
from sessions.shownkit import SID, fill

from acp_bridge.sessions import SCHEMA_VERSION, SessionStore, migrate, transcript
from acp_bridge.sessions._shown import FIRST_PAGE, PAGE

pytestmark = pytest.mark.requirement("PERF-LOAD-002")


def test_the_shown_pages_replay_exactly_what_the_full_turn_rows_do(tmp_path: Path) -> None:
    with SessionStore(tmp_path) as store:
        fill(store, 30)
        shown = [item for page in store.shown_pages(SID, 4, 7) for item in transcript(page)]
        full = [item for page in store.turn_pages(SID) for item in transcript(page)]
    assert shown == full
    kinds = {type(item).__name__ for item in shown}
    assert kinds == {
        "PromptShown",
        "AgentThought",
        "AgentText",
        "StoredToolCall",
        "CompactionRecord",
    }


def test_pages_grow_from_a_small_first_page(tmp_path: Path) -> None:
    assert FIRST_PAGE < PAGE
    with SessionStore(tmp_path) as store:
        fill(store, FIRST_PAGE + PAGE + 3)
        assert [len(page) for page in store.shown_pages(SID)] == [FIRST_PAGE, PAGE, 3]
        assert [[t.seq for t in p] for p in store.shown_pages(SID, 2, 3)][:3] == [
            [1, 2],
            [3, 4, 5],
            [6, 7, 8],
        ]


def test_a_page_is_three_range_queries_on_the_turn_indexes(tmp_path: Path) -> None:
    with SessionStore(tmp_path) as store:
        fill(store, 10)
        statements: list[str] = []
        store._db.set_trace_callback(statements.append)
        pages = list(store.shown_pages(SID, 4, 4))
        store._db.set_trace_callback(None)
        assert [len(p) for p in pages] == [4, 4, 2]
        # Three per page, and one that finds no more turns.
        assert len(statements) == 3 * len(pages) + 1
        for_messages = [s for s in statements if "FROM messages" in s]
        for_calls = [s for s in statements if "FROM tool_calls" in s]
        assert len(for_messages) == len(for_calls) == len(pages)
        # A body is read only where the row is a compaction record (model_call IS NULL and
        # the compaction prefix): the conversation stays in SQLite.
        assert all("CASE WHEN model_call IS NULL THEN body END" in s for s in for_messages)
        plans = {
            "messages": _plan(store._db, for_messages[0]),
            "tool_calls": _plan(store._db, for_calls[0]),
        }
    assert "USING INDEX messages_by_turn" in plans["messages"], plans
    assert "USING INDEX tool_calls_by_turn" in plans["tool_calls"], plans
    assert "TEMP B-TREE" not in plans["messages"] + plans["tool_calls"], plans


def _plan(db: sqlite3.Connection, statement: str) -> str:
    return " ".join(str(row[-1]) for row in db.execute(f"EXPLAIN QUERY PLAN {statement}"))


def test_a_replay_holds_a_page_not_the_conversation(tmp_path: Path) -> None:
    """Each turn keeps a 256 KiB tool result (a session of 20 MiB at 80 turns): reading
    what the turns showed never holds more than a few of those, whatever the length."""
    result = 256 * 1024
    peaks = []
    with SessionStore(tmp_path) as store:
        fill(store, 10, result_chars=result)
        peaks.append(_peak(store))
        fill(store, 70, result_chars=result, first=11)
        peaks.append(_peak(store))
    short, long = peaks
    assert long < 2 * result, peaks  # not even one tool result's body at a time
    assert long < 2 * short + 64 * 1024, peaks  # 8x the turns: about the same memory


def _peak(store: SessionStore) -> int:
    tracemalloc.start()
    try:
        items = 0
        for page in store.shown_pages(SID, 4, 8):
            items += sum(1 for _ in transcript(page))
        assert items > 0
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.requirement("SESS-003")
def test_a_version_5_database_gets_the_turn_indexes_keeping_its_turns(tmp_path: Path) -> None:
    path = tmp_path / "sessions.sqlite3"
    db = sqlite3.connect(path, isolation_level=None)
    migrate(db, target=5)
    db.close()
    with SessionStore(tmp_path) as store:  # written at 7 by this code, then taken back to 5
        fill(store, 3)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("DROP INDEX messages_by_turn")
    db.execute("DROP INDEX tool_calls_by_turn")
    db.execute("ALTER TABLE turns DROP COLUMN usage")
    db.execute("PRAGMA user_version = 5")
    db.close()
    assert SCHEMA_VERSION == 7
    with SessionStore(tmp_path) as store:
        pages = list(store.shown_pages(SID))
        assert [t.seq for t in pages[0]] == [1, 2, 3]
        assert len(store.history(SID)) > 0
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone() == (7,)
    names = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    db.close()
    assert {"messages_by_turn", "tool_calls_by_turn"} <= names
