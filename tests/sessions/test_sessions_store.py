"""The session store on its own: codec round trips, migrations, listing, ownership, turns."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_bridge.providers import (
    AssistantTurn,
    Message,
    Thought,
    ToolCall,
    ToolResult,
    ToolResults,
    UserTurn,
)
from acp_bridge.sessions import (
    MIGRATIONS,
    PAGE_SIZE,
    SCHEMA_VERSION,
    Owner,
    SessionInUse,
    SessionNotFound,
    SessionRecord,
    SessionStore,
    SessionStoreError,
    StoredToolCall,
    TurnState,
    message_from_json,
    message_to_json,
    migrate,
    owner_alive,
    process_start,
)
from acp_bridge.tools import DiffContent, Location, TerminalContent, TextContent, ToolKind
from acp_bridge.turn import ToolStatus

json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
text = st.text(max_size=20)
thoughts = st.builds(Thought, text, st.none() | text, st.none() | text)
calls = st.builds(
    ToolCall,
    text,
    text,
    st.dictionaries(st.text(max_size=5), json_values, max_size=3),
    st.dictionaries(st.text(max_size=5), json_values, max_size=2),
)
messages: st.SearchStrategy[Message] = st.one_of(
    st.builds(UserTurn, st.lists(text, max_size=3).map(tuple)),
    st.builds(
        AssistantTurn,
        text,
        st.lists(thoughts, max_size=3).map(tuple),
        st.lists(calls, max_size=3).map(tuple),
    ),
    st.builds(
        ToolResults,
        st.lists(st.builds(ToolResult, text, text, text, st.booleans()), max_size=3).map(tuple),
    ),
)


@pytest.mark.requirement("SESS-004")
@given(messages)
def test_conversation_records_round_trip_exactly(message: Message) -> None:
    import json

    stored = json.loads(json.dumps(message_to_json(message)))
    assert message_from_json(stored) == message


def _record(session_id: str, cwd: str = "/w", updated: float = 1.0) -> SessionRecord:
    return SessionRecord(session_id, cwd, ("/extra",), "ask", "m", None, updated, updated)


@pytest.mark.requirement("SESS-001")
def test_the_store_is_wal_with_full_sync_beside_the_ledger(tmp_path: Path) -> None:
    with SessionStore(tmp_path) as store:
        assert store.path == tmp_path / "sessions.sqlite3"
        db = sqlite3.connect(store.path)
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        db.close()


@pytest.mark.requirement("SESS-003")
def test_a_version_1_database_is_migrated_keeping_its_sessions(tmp_path: Path) -> None:
    path = tmp_path / "sessions.sqlite3"
    db = sqlite3.connect(path, isolation_level=None)
    migrate(db, target=1)
    assert db.execute("PRAGMA user_version").fetchone() == (1,)
    db.execute(
        "INSERT INTO sessions (session_id, cwd, mode, model, title, created_at, updated_at)"
        " VALUES ('sess_old', '/w', 'auto-edit', 'm', 'Old one', 5.0, 6.0)"
    )
    db.close()
    assert len(MIGRATIONS) == SCHEMA_VERSION >= 2
    with SessionStore(tmp_path) as store:
        record = store.get("sess_old")
        assert record is not None
        assert (record.title, record.mode, record.mcp_servers) == ("Old one", "auto-edit", ())
        assert [s.session_id for s in store.list_sessions(cwd="/w").sessions] == ["sess_old"]
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    db.close()


@pytest.mark.requirement("SESS-003")
def test_a_newer_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "sessions.sqlite3"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(SessionStoreError, match="Upgrade acp-bridge"):
        SessionStore(tmp_path)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION + 1,)
    db.close()


@pytest.mark.requirement("SESS-041")
def test_listing_is_newest_first_paginated_and_filtered(tmp_path: Path) -> None:
    owner = Owner()
    with SessionStore(tmp_path) as store:
        for i in range(PAGE_SIZE + 7):
            cwd = "/a" if i % 2 else "/b"
            store.create(_record(f"sess_{i:03d}", cwd, updated=1000.0 + i // 3), owner)
        seen: list[str] = []
        cursor: str | None = None
        pages = 0
        while True:
            page = store.list_sessions(cursor=cursor)
            seen.extend(s.session_id for s in page.sessions)
            pages += 1
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert pages == 2
        expected = sorted(
            (f"sess_{i:03d}" for i in range(PAGE_SIZE + 7)),
            key=lambda sid: (1000.0 + int(sid[5:]) // 3, sid),
            reverse=True,
        )
        assert seen == expected
        only_a = store.list_sessions(cwd="/a")
        assert {s.cwd for s in only_a.sessions} == {"/a"}
        assert only_a.next_cursor is None
        assert len(only_a.sessions) == (PAGE_SIZE + 7) // 2
        with pytest.raises(ValueError, match="cursor"):
            store.list_sessions(cursor="not-a-cursor")


@pytest.mark.requirement("SESS-015")
def test_a_session_has_one_owner_until_it_is_released(tmp_path: Path) -> None:
    first, second = Owner(), Owner()
    with SessionStore(tmp_path) as store:
        store.create(_record("sess_1"), first)
        with pytest.raises(SessionInUse) as raised:
            store.claim("sess_1", second)
        assert raised.value.owner_pid == first.pid
        with pytest.raises(SessionInUse):
            store.delete("sess_1", second)
        store.claim("sess_1", first)  # the owner may claim again
        store.release("sess_1", first)
        store.claim("sess_1", second)
        with pytest.raises(SessionNotFound):
            store.claim("sess_nope", second)
        assert store.delete("sess_nope", second) is False


@pytest.mark.requirement("SESS-016")
def test_an_owner_whose_process_is_gone_is_stale(tmp_path: Path) -> None:
    assert owner_alive(os.getpid(), Owner().started)  # another connection of this process
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    try:
        started = process_start(child.pid)
        assert started is not None
        assert owner_alive(child.pid, started)
        # The same pid with another start time is a recycled pid: not the owner.
        assert not owner_alive(child.pid, str(int(started) + 1))
        child.kill()
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # dead, not yet reaped
        assert not owner_alive(child.pid, started)  # a zombie runs nothing
    finally:
        child.kill()
        child.wait()
        assert child.stdin is not None
        child.stdin.close()
    assert not owner_alive(child.pid, started)
    dead = Owner(pid=child.pid, started=started, token="gone")
    with SessionStore(tmp_path) as store:
        store.create(_record("sess_1"), dead)
        assert store.owned_by("sess_1") is None
        store.claim("sess_1", Owner())


def _call(tool_call_id: str, status: ToolStatus, **extra: object) -> StoredToolCall:
    return StoredToolCall(
        tool_call_id=tool_call_id,
        model_call=1,
        position=1,
        title="Write a.txt",
        kind=ToolKind.EDIT,
        status=status,
        **extra,  # type: ignore[arg-type]
    )


@pytest.mark.requirement("SESS-011")
def test_turn_rows_messages_and_tool_calls_round_trip(tmp_path: Path) -> None:
    owner = Owner()
    prompt = [{"type": "text", "text": "hi"}]
    with SessionStore(tmp_path) as store:
        store.create(_record("sess_1"), owner)
        start = store.begin_turn("sess_1", owner, prompt, UserTurn(("hi",)))
        assert (start.seq, start.ordinal, start.turn_id, start.id_prefix, start.retry_of) == (
            1,
            1,
            "sess_1-turn1",
            "sess_1-turn1",
            None,
        )
        call = _call(
            "sess_1-turn1-t1",
            ToolStatus.COMPLETED,
            content=(
                TextContent("done"),
                DiffContent("/w/a.txt", "new", None),
                TerminalContent("t"),
            ),
            locations=(Location("/w/a.txt", 3),),
            raw_input={"path": "a.txt"},
            raw_output={"ok": True},
            effect_key="k" * 64,
        )
        store.save_tool_call("sess_1", start.seq, call)
        store.end_turn("sess_1", start.seq, TurnState.COMPLETED, stop_reason="end_turn")
        (turn,) = store.turns("sess_1")
        assert turn.tool_calls == (call,)
        assert (turn.state, turn.stop_reason, turn.prompt) == (
            TurnState.COMPLETED,
            "end_turn",
            tuple(prompt),
        )
        assert store.history("sess_1") == [UserTurn(("hi",))]


@pytest.mark.requirement("SESS-021")
def test_the_same_prompt_after_an_interrupted_turn_runs_that_turn_again(tmp_path: Path) -> None:
    owner = Owner()
    prompt = [{"type": "text", "text": "refund"}]
    with SessionStore(tmp_path) as store:
        store.create(_record("sess_1"), owner)
        first = store.begin_turn("sess_1", owner, prompt, UserTurn(("refund",)))
        store.add_message("sess_1", first.seq, AssistantTurn("partial"))
        # The process dies here: the turn stays running. The same prompt again:
        again = store.begin_turn("sess_1", owner, prompt, UserTurn(("refund",)))
        assert (again.ordinal, again.turn_id, again.retry_of) == (1, first.turn_id, first.seq)
        assert again.id_prefix == f"{first.turn_id}-r1"
        # Only the rerun is model history; the first stays for display, interrupted.
        assert store.history("sess_1") == [UserTurn(("refund",))]
        old, new = store.turns("sess_1")
        assert (old.superseded, old.state, new.superseded) == (True, TurnState.INTERRUPTED, False)
        store.end_turn("sess_1", again.seq, TurnState.COMPLETED, stop_reason="end_turn")
        # A completed turn is never run again: the same prompt is a new turn.
        third = store.begin_turn("sess_1", owner, prompt, UserTurn(("refund",)))
        assert (third.ordinal, third.retry_of, third.id_prefix) == (2, None, "sess_1-turn2")
        store.end_turn("sess_1", third.seq, TurnState.FAILED, note="boom")
        # Another prompt after a failed turn: a new turn, the failed one stays history.
        other = store.begin_turn("sess_1", owner, [{"type": "text", "text": "x"}], UserTurn(("x",)))
        assert (other.ordinal, other.retry_of) == (3, None)


def test_writes_need_the_owner(tmp_path: Path) -> None:
    owner, intruder = Owner(), Owner()
    with SessionStore(tmp_path) as store:
        store.create(_record("sess_1"), owner)
        with pytest.raises(SessionInUse):
            store.begin_turn("sess_1", intruder, [], UserTurn(("x",)))
        assert store.turns("sess_1") == []
