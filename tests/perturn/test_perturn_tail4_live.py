"""The usage report's and the turn's exit's share of the turn's tail: the usage_update line
built directly, byte-equal to the general encoder's (LIVE4-001), the window looked up once a
turn (LIVE4-002), leaving `running()` with nothing queued (LIVE4-003), and the budget's
overhead worked out when asked for (LIVE4-004). Structural checks, never timings."""

from __future__ import annotations

import math

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_bridge.agent._live import LiveUpdates, usage_meta, usage_wire
from acp_bridge.agent._sink import PeerTurnSink
from acp_bridge.agent._usage_line import UsageLines
from acp_bridge.providers import AssistantTurn, Message, Usage, UserTurn
from acp_bridge.turn import (
    AgentText,
    AttemptUsage,
    ContextBudget,
    UsageReport,
    estimate_tokens,
)
from acp_bridge.turn._attempt import AttemptState, ModelCall
from acp_bridge.turn._usage import usage_report
from acp_bridge.wire import encode


def _reports(
    counts: st.SearchStrategy[object],
    costs: st.SearchStrategy[object],
    text: st.SearchStrategy[str],
) -> st.SearchStrategy[UsageReport]:
    usages = st.one_of(
        st.none(),
        st.builds(
            Usage,
            input_tokens=counts,
            output_tokens=counts,
            cached_input_tokens=counts,
            reasoning_tokens=counts,
            cost=costs,
        ),
    )
    attempts = st.builds(
        AttemptUsage,
        attempt=st.integers(1, 9),
        state=st.one_of(st.sampled_from(["completed", "abandoned", "failed"]), text),
        usage=usages,
        billed=st.booleans(),
    )
    return st.builds(
        UsageReport,
        model_call=st.integers(0, 99),
        kept=usages,
        attempts=st.lists(attempts, max_size=4).map(tuple),
        context=st.one_of(st.none(), st.integers(0, 10**7)),
        compaction_id=st.one_of(st.none(), text),
        ends_turn=st.booleans(),
    )


_finite = st.floats(-1e12, 1e12)  # sums stay finite: what the general encoder writes
_usual_text = st.text(st.characters(exclude_categories=["Cs"]))
_usual = _reports(
    st.integers(0, 2**64), st.one_of(st.none(), _finite, st.integers(0, 99)), _usual_text
)
_any = _reports(
    st.one_of(st.integers(-5, 2**64), st.booleans(), st.floats()),
    st.one_of(st.none(), st.floats(), st.integers(-3, 10**6), st.booleans()),
    st.text(),
)
_sources = st.sampled_from(["config", "provider", "known_models", "default"])


def _lines(session_id: str) -> UsageLines:
    return UsageLines(None, session_id, LiveUpdates(""))  # type: ignore[arg-type]


def _general(
    session_id: str, report: UsageReport, used: int, size: int, cost: float | None, source: str
) -> bytes:
    update = usage_wire(used, size, cost, {**usage_meta(report), "sizeSource": source})
    params = {"sessionId": session_id, "update": update}
    return encode({"jsonrpc": "2.0", "method": "session/update", "params": params})


_Case = tuple[str, UsageReport, int, int, "float | None", str]
"""The session id, the report, used, size, cost and sizeSource of a usage_update."""

_usual_cases = st.tuples(
    _usual_text,
    _usual,
    st.integers(0, 2**64),
    st.integers(0, 2**64),
    st.one_of(st.none(), _finite, st.integers(0, 10**6)),
    st.one_of(_sources, _usual_text),
)
_any_cases = st.tuples(
    st.text(),
    _any,
    st.integers(-2, 2**64),
    st.integers(-2, 2**64),
    st.one_of(st.none(), st.floats(), st.integers(0, 10**6)),
    st.one_of(_sources, st.text()),
)


@pytest.mark.requirement("LIVE4-001")
@given(_usual_cases)
def test_the_direct_line_is_the_general_encoders(case: _Case) -> None:
    assert _lines(case[0]).line(*case[1:]) == _general(*case)


@pytest.mark.requirement("LIVE4-001")
@pytest.mark.parametrize("cost", [None, 0.0, -0.0, 0, 3, 0.1, -2.5, 1e300])
@pytest.mark.parametrize("attempts", [1, 2])
def test_a_call_of_one_attempt_writes_its_sums_as_the_general_encoder(
    cost: float | None, attempts: int
) -> None:
    """One attempt, the kept one: `billed` is its figures, except that a zero cost sums
    to 0.0 (`0 + (cost or 0.0)`)."""
    kept = Usage(input_tokens=7, output_tokens=3, cached_input_tokens=2, cost=cost)
    tried = [AttemptUsage(n, "abandoned", Usage(1, 1, cost=cost), True) for n in range(1, attempts)]
    report = UsageReport(1, kept, (*tried, AttemptUsage(attempts, "completed", kept, True)))
    line = _lines("s").line(report, 10, 100, cost, "default")
    assert line == _general("s", report, 10, 100, cost, "default")


@pytest.mark.requirement("LIVE4-001")
@given(_any_cases)
def test_what_the_direct_line_does_not_write_takes_the_general_encoder(case: _Case) -> None:
    line = _lines(case[0]).line(*case[1:])
    try:
        expected = _general(*case)
    except ValueError:  # a negative count, a cost that is not a number: refused as before
        assert line is None
        return
    if line is not None:
        assert line == expected
    else:  # only a figure the general encoder writes its own way takes the general path
        assert _unusual(*case)


def _unusual(
    session_id: str, report: UsageReport, used: int, size: int, cost: float | None, source: str
) -> bool:
    usages = [report.kept, *(a.usage for a in report.attempts)]
    figures: list[object] = [report.model_call, used, size, *(a.attempt for a in report.attempts)]
    costs: list[object] = [cost]
    for usage in usages:
        if usage is not None:
            figures += [
                usage.input_tokens,
                usage.output_tokens,
                usage.cached_input_tokens,
                usage.reasoning_tokens,
            ]
            costs.append(usage.cost)
    strings = [session_id, source, report.compaction_id or "", *(a.state for a in report.attempts)]
    return (
        any(type(f) is not int for f in figures)
        or any(c is not None and not (type(c) in (int, float) and math.isfinite(c)) for c in costs)
        or not all(_encodable(s) for s in strings)
    )


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _report(*, ends_turn: bool, cost: float | None = None) -> UsageReport:
    kept = Usage(input_tokens=1200, output_tokens=34, cost=cost)
    return UsageReport(
        3,
        kept,
        (
            AttemptUsage(1, "abandoned", Usage(input_tokens=1200, output_tokens=5), True),
            AttemptUsage(2, "completed", kept, True),
        ),
        ends_turn=ends_turn,
    )


class _Peer:
    """Records what the sink hands the peer: lines it encoded, lines held for the next write."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.held: list[bytes] = []
        self.messages: list[object] = []

    async def notify_encoded(self, line: bytes, message: object) -> None:
        self.written.append(line)
        self.messages.append(message)

    def notify_encoded_with_next(self, line: bytes, message: object) -> None:
        self.held.append(line)
        self.messages.append(message)


@pytest.mark.requirement("LIVE4-001")
@pytest.mark.anyio
async def test_the_sink_writes_the_direct_line_and_holds_the_turns_last(acp_wire: object) -> None:
    peer = _Peer()
    live = LiveUpdates("bench", context_window=200_000)
    sink = PeerTurnSink(peer, "sess_1", live)  # type: ignore[arg-type]
    with anyio.fail_after(30):
        await sink.send_update(_report(ends_turn=False, cost=0.5))
        await sink.send_update(_report(ends_turn=True, cost=0.25))
    assert len(peer.written) == 1
    assert len(peer.held) == 1  # the turn's last rides with the response
    first = _general("sess_1", _report(ends_turn=False, cost=0.5), 1234, 200_000, 0.5, "config")
    last = _general("sess_1", _report(ends_turn=True, cost=0.25), 1234, 200_000, 0.75, "config")
    assert peer.written == [first]
    assert peer.held == [last]
    for line, message in zip([first, last], peer.messages, strict=True):
        assert callable(message)
        assert encode(message()) == line  # what the tracer is told is what was written
        acp_wire.check(message())  # type: ignore[attr-defined]
    assert live.snapshot() == {"used": 1234, "size": 200_000, "cost": 0.75, "sizeSource": "config"}


@pytest.mark.requirement("LIVE4-002")
def test_the_turns_usage_updates_take_the_window_looked_up_at_its_start() -> None:
    asked: list[str] = []
    sizes = {"m": (64_000, "provider")}

    def windows(model: str) -> tuple[int, str]:
        asked.append(model)
        return sizes[model]

    live = LiveUpdates("m", windows=windows)
    assert live.window() == (64_000, "provider")  # the turn's start (the context budget)
    for _ in range(3):
        update = live.wire(_report(ends_turn=False))
        assert isinstance(update, dict)
        assert update["size"] == 64_000
    assert asked == ["m"]  # once for the turn, not once per usage_update
    sizes["m"] = (32_000, "provider")  # the listing arrived: the next turn's start sees it
    assert live.window() == (32_000, "provider")
    live.windows = None
    live.context_window = 8_000  # another source: looked up afresh
    update = live.wire(_report(ends_turn=False))
    assert isinstance(update, dict)
    assert (update["size"], update["_meta"]["acpBridge"]["sizeSource"]) == (8_000, "config")  # type: ignore[index]


class _Counted:
    """`anyio.move_on_after`, counting the calls (the shielded wait of a flush on exit)."""

    def __init__(self) -> None:
        self.calls = 0
        self._real = anyio.move_on_after

    def __call__(self, delay: float | None, shield: bool = False) -> anyio.CancelScope:
        self.calls += 1
        return self._real(delay, shield)


class _Editor(_Peer):
    """A peer that also writes chunk lines, one write at a time (the writer's)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = anyio.Event()

    async def notify_encoded(self, line: bytes, message: object) -> None:
        await self.gate.wait()
        await super().notify_encoded(line, message)

    async def notify_lines(self, lines: list[bytes]) -> None:
        await self.gate.wait()
        self.written.extend(lines)


@pytest.mark.requirement("LIVE4-003")
@pytest.mark.anyio
async def test_leaving_with_nothing_queued_sets_up_no_shielded_wait(
    monkeypatch: pytest.MonkeyPatch, cancels: list[str]
) -> None:
    waits = _Counted()
    monkeypatch.setattr(anyio, "move_on_after", waits)
    editor = _Editor()
    editor.gate.set()
    live = LiveUpdates("bench", context_window=200_000)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as background:
            sink = PeerTurnSink(editor, "s", live, background=background)  # type: ignore[arg-type]
            for turn in range(3):
                async with sink.running():
                    for n in range(5):
                        await sink.send_update(AgentText(f"<{turn}.{n}>", f"m{turn}"))
                    await sink.send_update(_report(ends_turn=True))  # waits for the queue
                assert b"".join(editor.written).count(b"<%d." % turn) == 5
    assert waits.calls == 0
    assert cancels == []  # the idle writer was told to return, never cancelled
    assert len(editor.held) == 3


@pytest.mark.requirement("LIVE4-003")
@pytest.mark.anyio
async def test_leaving_with_chunks_queued_writes_them_before_it_returns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    waits = _Counted()
    monkeypatch.setattr(anyio, "move_on_after", waits)
    editor = _Editor()  # the editor does not read until the turn is left
    with anyio.fail_after(30):
        async with anyio.create_task_group() as background:
            sink = PeerTurnSink(editor, "s", background=background)  # type: ignore[arg-type]
            async with sink.running():
                for n in range(5):
                    await sink.send_update(AgentText(f"<{n}>", "m"))
                background.start_soon(_open, editor.gate)
            written = b"".join(editor.written).decode()
    assert waits.calls == 1  # the one shielded, bounded wait of a flush on exit
    assert [f"<{n}>" in written for n in range(5)] == [True] * 5  # all before it returned


async def _open(gate: anyio.Event) -> None:
    gate.set()


@pytest.mark.requirement("LIVE4-003")
@pytest.mark.anyio
async def test_the_turns_own_error_leaves_as_it_is_and_the_writers_is_raised() -> None:
    editor = _Editor()
    editor.gate.set()
    with anyio.fail_after(30):
        async with anyio.create_task_group() as background:
            sink = PeerTurnSink(editor, "s", background=background)  # type: ignore[arg-type]
            with pytest.raises(KeyError):
                async with sink.running():
                    raise KeyError("the turn's")
            async with sink.running():  # runs again after a failed turn
                await sink.send_update(AgentText("again", "m"))
    assert b"again" in b"".join(editor.written)


@pytest.mark.requirement("LIVE4-004")
def test_the_budget_works_out_the_overhead_when_asked_for() -> None:
    budget = ContextBudget(window=10**9)
    history: list[Message] = []
    for n in range(40):
        history += [UserTurn((f"prompt {n} " * (n % 5 + 1),), ()), AssistantTurn(f"answer {n}")]
        budget.observe(Usage(input_tokens=10**6 + n, output_tokens=10), history)
        assert budget.tally.counted == 0  # nothing counted after the call, in the tail
    sent = list(history)
    history.append(AssistantTurn("the reply, kept after the call"))
    history[:] = history[-3:]  # and a compaction's rewrite: the call sent what it sent
    assert budget.overhead == 10**6 + 39 - estimate_tokens(sent)
    assert budget.tally.counted == len(sent)  # each message once
    budget.overhead = 7  # set (a first budget's estimate): what was pending is dropped
    assert budget.overhead == 7


def _made_call(states: list[tuple[str, Usage | None, bool]]) -> ModelCall:
    call = ModelCall(4)
    for _, used, events in states:
        attempt = call.start_attempt()
        attempt.usage, attempt.received_events = used, events
        attempt.abandon("a retry")
    for attempt, (state, _, _) in zip(call.attempts, states, strict=True):
        attempt.state = AttemptState(state)  # as the call left it
    return call


_attempt_states = st.tuples(
    st.sampled_from(["completed", "abandoned", "open"]),
    st.one_of(st.none(), st.builds(Usage, st.integers(0, 99), st.integers(0, 99))),
    st.booleans(),
)


@pytest.mark.requirement("USAGE-002")
@given(st.lists(_attempt_states, min_size=1, max_size=4), st.booleans())
def test_a_calls_usage_report_names_every_attempt_and_the_first_completed_as_kept(
    states: list[tuple[str, Usage | None, bool]], ends_turn: bool
) -> None:
    report = usage_report(_made_call(states), ends_turn=ends_turn)
    if all(used is None for _, used, _ in states):
        assert report is None
        return
    kept = next((used for state, used, _ in states if state == "completed"), None)
    attempts = tuple(
        AttemptUsage(n, state, used, events) for n, (state, used, events) in enumerate(states, 1)
    )
    assert report == UsageReport(4, kept, attempts, ends_turn=ends_turn)
