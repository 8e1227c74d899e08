"""The effect ledger: started / done, reuse, unknown outcomes, reopening (spec/effect-keys.md)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from turn.turnkit import (
    FakeProvider,
    IssueRefund,
    RecordingSink,
    finish,
    make_request,
    start,
    text,
    tool_call,
)

from acp_bridge.errors import ToolError
from acp_bridge.providers import FinishReason, ToolResults
from acp_bridge.tools._base import DiffContent, TerminalContent, TextContent, ToolOutcome
from acp_bridge.turn import (
    EffectKey,
    EffectLedger,
    EffectRecord,
    EffectState,
    LedgerUnavailable,
    PermissionMemory,
    SessionMode,
    StopReason,
    ToolCallChanged,
    run_turn,
)

REFUND = {"order_id": "ORD-7781"}
KEY = EffectKey.derive("s1-turn1", "issue_refund", REFUND)


def refund_turn() -> FakeProvider:
    return FakeProvider(
        [start(), *tool_call("c1", "issue_refund", REFUND), finish(FinishReason.TOOL_CALLS)],
        [start(), *text("Done."), finish()],
    )


@pytest.mark.requirement("EFFECT-007")
def test_started_then_done_with_the_outcome(tmp_path: Path) -> None:
    outcome = ToolOutcome(
        ok=True,
        for_model="refund R-1 issued",
        content=(TextContent("ok"), DiffContent("/w/a", "new", None), TerminalContent("term-1")),
        raw_output={"refund": "R-1", "cents": 2500},
    )
    with EffectLedger(tmp_path / "state") as ledger:
        assert ledger.path == tmp_path / "state" / "effects.sqlite3"
        assert ledger.lookup(KEY) is None
        ledger.record_started(KEY, session_id="s1", mode=SessionMode.AUTO_EDIT.value)
        started = ledger.lookup(KEY)
        assert started is not None
        assert started.state is EffectState.STARTED
        assert (started.session_id, started.turn_id, started.tool, started.step, started.mode) == (
            "s1",
            "s1-turn1",
            "issue_refund",
            0,
            "auto-edit",
        )
        assert started.arguments == '{"order_id":"ORD-7781"}'
        assert started.outcome is None
        ledger.record_done(KEY, outcome)
        done = ledger.lookup(str(KEY))
        assert done is not None
        assert done.state is EffectState.DONE
        assert done.outcome == outcome
        assert done.done_at is not None
        with pytest.raises(KeyError):
            ledger.record_done(EffectKey.derive("s1-turn1", "other", {}), outcome)


@pytest.mark.requirement("EFFECT-007")
def test_a_second_ledger_on_the_same_directory_sees_the_records(tmp_path: Path) -> None:
    first = EffectLedger(tmp_path)
    first.record_started(KEY, session_id="s1", mode="ask")
    second = EffectLedger(tmp_path)  # another process would open it exactly like this
    record = second.lookup(KEY)
    assert record is not None
    assert record.state is EffectState.STARTED
    first.record_done(KEY, ToolOutcome(ok=True, for_model="done"))
    record = second.lookup(KEY)
    assert record is not None
    assert record.state is EffectState.DONE
    assert [r.key for r in second.records()] == [str(KEY)]
    first.close()
    second.close()
    with sqlite3.connect(tmp_path / "effects.sqlite3") as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("PRAGMA user_version").fetchone() == (1,)


def test_a_ledger_written_by_a_newer_bridge_is_refused(tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "effects.sqlite3") as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(LedgerUnavailable, match="schema 99"):
        EffectLedger(tmp_path)


@pytest.mark.anyio
@pytest.mark.requirement("EFFECT-008")
async def test_a_done_key_is_reused_without_running_again(tmp_path: Path) -> None:
    first_refund = IssueRefund()
    with EffectLedger(tmp_path) as ledger:
        await run_turn(make_request(refund_turn(), RecordingSink(), [first_refund], ledger=ledger))
    assert len(first_refund.executions) == 1

    # The same turn replayed (same turn id) by a fresh process on the same state directory.
    replay_refund = IssueRefund()
    sink = RecordingSink()
    with EffectLedger(tmp_path) as ledger:
        request = make_request(refund_turn(), sink, [replay_refund], ledger=ledger)
        result = await run_turn(request)
    assert replay_refund.executions == []
    assert sink.prompts == []  # nothing runs, so nothing to approve
    (run,) = result.tool_runs
    assert run.reused
    assert not run.ran
    assert run.effect_key == str(KEY)
    final = [u for u in sink.updates if isinstance(u, ToolCallChanged)][-1]
    assert final.status is not None
    assert final.status.value == "completed"
    assert final.content is not None
    assert "Not run again" in final.content[-1].text
    results = request.history[2]
    assert isinstance(results, ToolResults)
    assert results.results[0].output.startswith("issue_refund done")  # the recorded result


@pytest.mark.anyio
@pytest.mark.requirement("EFFECT-009")
async def test_started_but_not_done_asks_before_running_again() -> None:
    ledger = EffectLedger.in_memory()
    ledger.record_started(KEY, session_id="s1", mode="ask")  # a crash right after this
    memory = PermissionMemory()
    memory.remember("issue_refund", "issue_refund", allow=True)  # even "always allow" asks
    refund = IssueRefund()
    sink = RecordingSink(["allow-once"])
    result = await run_turn(
        make_request(
            refund_turn(), sink, [refund], ledger=ledger, memory=memory, mode=SessionMode.AUTO_EDIT
        )
    )
    (prompt,) = sink.prompts
    assert "outcome is unknown" in prompt.call.title
    assert [o.kind.value for o in prompt.options] == ["allow_once", "reject_once"]
    assert len(refund.executions) == 1
    record = ledger.lookup(KEY)
    assert record is not None
    assert record.state is EffectState.DONE
    assert result.stop_reason is StopReason.END_TURN


@pytest.mark.anyio
@pytest.mark.requirement("EFFECT-009")
async def test_an_unknown_outcome_that_the_user_declines_is_not_run() -> None:
    ledger = EffectLedger.in_memory()
    ledger.record_started(KEY, session_id="s1", mode="ask")
    refund = IssueRefund()
    sink = RecordingSink(["reject-once"])
    request = make_request(refund_turn(), sink, [refund], ledger=ledger)
    await run_turn(request)
    assert refund.executions == []
    assert reduce_status(sink) == "failed"
    results = request.history[2]
    assert isinstance(results, ToolResults)
    assert results.results[0].is_error
    record = ledger.lookup(KEY)
    assert record is not None
    assert record.state is EffectState.STARTED


@pytest.mark.anyio
@pytest.mark.requirement("EFFECT-010")
async def test_a_crashing_tool_leaves_the_key_started_and_a_tool_error_is_done() -> None:
    ledger = EffectLedger.in_memory()
    crashing = IssueRefund(fail_with=RuntimeError("boom"))
    await run_turn(make_request(refund_turn(), RecordingSink(), [crashing], ledger=ledger))
    record = ledger.lookup(KEY)
    assert record is not None
    assert record.state is EffectState.STARTED

    ledger = EffectLedger.in_memory()
    refusing = IssueRefund(fail_with=ToolError("order already refunded"))
    request = make_request(refund_turn(), RecordingSink(), [refusing], ledger=ledger)
    await run_turn(request)
    record = ledger.lookup(KEY)
    assert record is not None
    assert record.state is EffectState.DONE
    assert record.outcome is not None
    assert not record.outcome.ok
    results = request.history[2]
    assert isinstance(results, ToolResults)
    assert results.results[0].output == "order already refunded"
    assert results.results[0].is_error


def reduce_status(sink: RecordingSink) -> str | None:
    changes = [u for u in sink.updates if isinstance(u, ToolCallChanged) and u.status]
    return changes[-1].status.value if changes else None  # type: ignore[union-attr]


class BrokenLedger(EffectLedger):
    """A ledger whose disk is gone after opening (locked, full, unmounted)."""

    def __init__(self, fail_on: str) -> None:
        super().__init__(None)
        self.fail_on = fail_on

    def lookup(self, key: EffectKey | str) -> EffectRecord | None:
        if self.fail_on == "lookup":
            raise LedgerUnavailable("effect ledger: database is locked")
        return super().lookup(key)

    def record_started(self, key: EffectKey, *, session_id: str, mode: str) -> None:
        if self.fail_on == "started":
            raise LedgerUnavailable("effect ledger: disk I/O error")
        super().record_started(key, session_id=session_id, mode=mode)

    def record_done(self, key: EffectKey | str, outcome: ToolOutcome) -> None:
        if self.fail_on == "done":
            raise LedgerUnavailable("effect ledger: disk I/O error")
        super().record_done(key, outcome)


@pytest.mark.anyio
@pytest.mark.requirement("EFFECT-007")
@pytest.mark.parametrize("fail_on", ["lookup", "started"])
async def test_an_effect_that_cannot_be_recorded_never_runs(fail_on: str) -> None:
    refund = IssueRefund()
    sink = RecordingSink()
    request = make_request(refund_turn(), sink, [refund], ledger=BrokenLedger(fail_on))
    result = await run_turn(request)
    assert refund.executions == []
    assert result.stop_reason is StopReason.END_TURN
    assert reduce_status(sink) == "failed"
    results = request.history[2]
    assert isinstance(results, ToolResults)
    assert results.results[0].output.startswith("Not run: effect ledger")


@pytest.mark.anyio
async def test_an_unrecorded_outcome_stays_unknown() -> None:
    refund = IssueRefund()
    ledger = BrokenLedger("done")
    await run_turn(make_request(refund_turn(), RecordingSink(), [refund], ledger=ledger))
    assert len(refund.executions) == 1
    record = ledger.lookup(KEY)
    assert record is not None
    assert record.state is EffectState.STARTED
