"""The sessions row off the turn's tail (STORE4-003) and the next ordinal without a scan
(STORE4-004).

A completed turn's end writes its own row (state, stop reason, the session's last usage) and
not the sessions row, whose `updated_at` sits in two indexes: `mark_answered`, after the
response, gives the sessions row the turn's end and usage. A bridge killed in between still
has the usage (USAGE-006): the read prefers the last turn's. Checked on what is stored and on
the statements SQLite runs, never by timing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from perturn.test_perturn_durability import transactions

from acp_bridge._json import JsonObject
from acp_bridge.providers import UserTurn
from acp_bridge.sessions import (
    SCHEMA_VERSION,
    Owner,
    SessionRecord,
    SessionStore,
    TurnStart,
    TurnState,
    migrate,
)

pytestmark = pytest.mark.requirement("STORE4-003")

U1: JsonObject = {"used": 100, "size": 1000}
U2: JsonObject = {"used": 250, "size": 1000, "cost": {"amount": 0.5, "currency": "USD"}}


def _new(store: SessionStore, owner: Owner, session_id: str = "s1") -> None:
    store.create(SessionRecord(session_id, "/w", (), "ask", "m", None, 1.0, 1.0), owner)


def _turn(
    store: SessionStore, owner: Owner, text: str, usage: JsonObject | None, session_id: str = "s1"
) -> int:
    """A completed turn whose response is still to be written; its row number."""
    start = store.begin_turn(session_id, owner, [{"type": "text", "text": text}], UserTurn((text,)))
    store.end_turn(
        session_id,
        start.seq,
        TurnState.COMPLETED,
        stop_reason="end_turn",
        answered=False,
        usage=usage,
    )
    return start.seq


def _row(path: Path, session_id: str = "s1") -> tuple[float, str | None]:
    db = sqlite3.connect(path / "sessions.sqlite3")
    try:
        (updated, usage) = db.execute(
            "SELECT updated_at, usage FROM sessions WHERE session_id = ?", (session_id,)
        ).fetchone()
    finally:
        db.close()
    return float(updated), usage


@contextmanager
def _begun(tmp_path: Path) -> Iterator[tuple[SessionStore, TurnStart, float]]:
    """A store with one session and a turn begun; the session row's `updated_at` then."""
    owner = Owner()
    with SessionStore(tmp_path) as store:
        _new(store, owner)
        start = store.begin_turn("s1", owner, [{"type": "text", "text": "a"}], UserTurn(("a",)))
        yield store, start, _row(tmp_path)[0]


def test_the_end_writes_the_turn_row_and_the_answer_mark_the_session_row(tmp_path: Path) -> None:
    with _begun(tmp_path) as (store, start, begun):
        statements: list[str] = []
        store._db.set_trace_callback(statements.append)
        store.end_turn(
            "s1", start.seq, TurnState.COMPLETED, stop_reason="end_turn", answered=False, usage=U1
        )
        ((_, end),) = transactions(statements)
        assert "UPDATE turns" in end
        assert "sessions" not in end  # not its row, not its two indexes
        assert _row(tmp_path) == (begun, None)  # the row as the turn's start left it
        assert store.usage("s1") == U1  # the turn's, the newest
        statements.clear()
        store.mark_answered("s1", start.seq)
        ((_, mark),) = transactions(statements)
        assert "UPDATE sessions SET updated_at" in mark
        updated, usage = _row(tmp_path)
        assert updated > begun
        assert usage == '{"used":100,"size":1000}'
        assert store.usage("s1") == U1


def test_a_kill_before_the_answer_mark_keeps_the_usage_and_the_next_turn_takes_it(
    tmp_path: Path,
) -> None:
    owner = Owner()
    with SessionStore(tmp_path) as store:
        _new(store, owner)
        store.mark_answered("s1", _turn(store, owner, "a", U1))
        _turn(store, owner, "b", U2)  # its response never written: killed here
    with SessionStore(tmp_path) as store:  # a restart
        assert store.usage("s1") == U2  # USAGE-006: what the lost response's update said
        assert _row(tmp_path)[1] == '{"used":100,"size":1000}'
        # A different prompt: a new turn; the unanswered one's usage becomes the session's.
        seq = _turn(store, owner, "c", None)
        assert (
            _row(tmp_path)[1] == '{"used":250,"size":1000,"cost":{"amount":0.5,"currency":"USD"}}'
        )
        assert store.usage("s1") == U2
        store.mark_answered("s1", seq)  # a turn that kept no usage of its own
        assert store.usage("s1") == U2


def test_an_end_that_is_answered_already_writes_the_session_row(tmp_path: Path) -> None:
    with _begun(tmp_path) as (store, start, begun):
        store.end_turn("s1", start.seq, TurnState.FAILED, note="boom", usage=U1)
        updated, usage = _row(tmp_path)
        assert updated > begun
        assert usage == '{"used":100,"size":1000}'


def test_session_list_orders_by_the_answered_end(tmp_path: Path) -> None:
    owner = Owner()
    with SessionStore(tmp_path) as store:
        _new(store, owner, "s1")
        _new(store, owner, "s2")
        first = _turn(store, owner, "a", None, "s1")
        second = _turn(store, owner, "b", None, "s2")
        store.mark_answered("s2", second)
        store.mark_answered("s1", first)  # answered last: the newest activity
        assert [s.session_id for s in store.list_sessions().sessions] == ["s1", "s2"]


@pytest.mark.requirement("SESS-003")
def test_a_version_6_database_keeps_its_session_usage(tmp_path: Path) -> None:
    path = tmp_path / "sessions.sqlite3"
    db = sqlite3.connect(path, isolation_level=None)
    migrate(db, target=6)
    db.execute(
        "INSERT INTO sessions (session_id, cwd, mode, model, created_at, updated_at, usage)"
        " VALUES ('s1', '/w', 'ask', 'm', 1.0, 1.0, '{\"used\":7,\"size\":9}')"
    )
    db.execute(
        "INSERT INTO turns (session_id, seq, ordinal, turn_id, id_prefix, state, prompt,"
        " started_at) VALUES ('s1', 1, 1, 's1-turn1', 's1-turn1', 'completed', '[]', 1.0)"
    )
    db.close()
    assert SCHEMA_VERSION == 7
    with SessionStore(tmp_path) as store:
        assert store.usage("s1") == {"used": 7, "size": 9}  # no turn kept one: the row's
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone() == (7,)
    db.close()


@pytest.mark.requirement("STORE4-004")
def test_the_next_ordinal_comes_from_the_last_row_without_a_scan(tmp_path: Path) -> None:
    owner = Owner()
    with SessionStore(tmp_path) as store:
        _new(store, owner)
        statements: list[str] = []
        store._db.set_trace_callback(statements.append)
        first = store.begin_turn("s1", owner, [{"type": "text", "text": "a"}], UserTurn(("a",)))
        store.end_turn("s1", first.seq, TurnState.FAILED, note="boom")
        rerun = store.begin_turn("s1", owner, [{"type": "text", "text": "a"}], UserTurn(("a",)))
        store.end_turn("s1", rerun.seq, TurnState.COMPLETED, stop_reason="end_turn")
        third = store.begin_turn("s1", owner, [{"type": "text", "text": "b"}], UserTurn(("b",)))
        assert not any("MAX(ordinal)" in sql for sql in statements)
        assert [(s.seq, s.ordinal) for s in (first, rerun, third)] == [(1, 1), (2, 1), (3, 2)]
        assert third.turn_id == "s1-turn2"
