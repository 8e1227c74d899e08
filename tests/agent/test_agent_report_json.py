"""The `session/prompt` result written directly (REPLY4-001): over generated turns, the text
`prompt_response_text` puts together is exactly what the generic encoder writes for the
dict `prompt_response_wire` / `turn_report` build, or None where the generic encoder must
judge (a big string, a non-finite cost)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_bridge.agent._light import prompt_response_wire
from acp_bridge.agent._report import turn_report
from acp_bridge.agent._report_json import prompt_response, prompt_response_text
from acp_bridge.jsonrpc import EncodedResult
from acp_bridge.providers import Usage
from acp_bridge.sessions import TurnStart
from acp_bridge.turn import (
    AttemptState,
    AttemptUsage,
    StopReason,
    SummaryCall,
    ToolRun,
    ToolStatus,
    TurnResult,
)
from acp_bridge.turn._request import AttemptReport
from acp_bridge.wire import BIG_STRING_CHARS, encode

pytestmark = pytest.mark.requirement("REPLY4-001")

# Any text: quotes, backslashes, control characters, non-ASCII, lone surrogates.
_text = st.text(st.characters(codec=None), max_size=12) | st.text(
    st.characters(categories=["Cs", "Cc", "Po", "Lo"]), max_size=6
)
_counts = st.integers(min_value=0, max_value=2**63)
_cost = st.none() | st.floats(allow_nan=True, allow_infinity=True)
_usage = st.none() | st.builds(Usage, _counts, _counts, _counts, _counts, _cost)
_attempt = st.builds(
    AttemptReport,
    st.integers(0, 40),
    st.integers(1, 9),
    st.sampled_from(AttemptState),
    st.none() | _text,
    _usage,
    st.booleans(),
    st.booleans(),
)
_run = st.builds(
    ToolRun,
    _text,
    _text,
    _text,
    st.sampled_from(ToolStatus),
    st.none() | _text,
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
_summary = st.builds(
    SummaryCall,
    _text,
    _text,
    st.integers(0, 9),
    st.lists(
        st.builds(AttemptUsage, st.integers(1, 9), _text, _usage, st.booleans(), st.none() | _text),
        max_size=3,
    ).map(tuple),
)
_start = st.builds(
    TurnStart, st.integers(1, 99), st.integers(1, 99), _text, _text, st.none() | st.integers(1, 9)
)
_result = st.builds(
    TurnResult,
    st.sampled_from(StopReason),
    st.integers(0, 40),
    st.integers(0, 40),
    st.lists(_attempt, max_size=4).map(tuple),
    st.lists(_run, max_size=3).map(tuple),
    st.lists(_summary, max_size=2).map(tuple),
)


def _generic_text(stop: str, start: TurnStart, result: TurnResult) -> str:
    """The text `wire.encode` writes before the newline (UTF-8 encoding aside)."""
    value = prompt_response_wire(stop, {"acpBridge": turn_report(start, result)})
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _costs(result: TurnResult) -> list[float]:
    usages = [a.usage for a in result.attempts]
    usages += [a.usage for s in result.summaries for a in s.attempts]
    return [u.cost for u in usages if u is not None and u.cost is not None]


@given(_start, _result)
def test_the_text_is_what_the_generic_encoder_writes(start: TurnStart, result: TurnResult) -> None:
    stop = result.stop_reason.value
    text = prompt_response_text(stop, start, result)
    if not all(math.isfinite(cost) for cost in _costs(result)):
        assert text is None  # the generic encoder refuses it (ValueError)
        return
    assert text == _generic_text(stop, start, result)
    try:
        line = (text + "\n").encode()
    except UnicodeEncodeError:
        return  # a lone surrogate: the peer falls back to the generic encoder (REPLY4-002)
    wire = prompt_response_wire(stop, {"acpBridge": turn_report(start, result)})
    assert line == encode(wire)


@given(_start, _result)
def test_the_result_is_encoded_or_the_dict(start: TurnStart, result: TurnResult) -> None:
    stop = result.stop_reason.value
    wire = prompt_response_wire(stop, {"acpBridge": turn_report(start, result)})
    answer = prompt_response(stop, start, result)
    if isinstance(answer, EncodedResult):
        assert answer.value() == wire
        assert answer.text == prompt_response_text(stop, start, result)
    else:
        assert answer == wire
        assert prompt_response_text(stop, start, result) is None


def _turn(reason: str | None = None, tool: str = "read_file") -> tuple[TurnStart, TurnResult]:
    start = TurnStart(3, 3, "turn-3", "p3-")
    attempt = AttemptReport(1, 1, AttemptState.COMPLETED, reason, Usage(5, 2), True, True)
    run = ToolRun("call-1", "c1", tool, ToolStatus.COMPLETED, "k", ran=True)
    return start, TurnResult(StopReason.END_TURN, 1, 0, (attempt,), (run,))


@pytest.mark.parametrize("where", ["reason", "tool"])
def test_a_big_string_is_left_to_the_generic_encoder(where: str) -> None:
    """The generic path writes a line holding a big string in pieces (PERF-BIG-004)."""
    big = "x" * (BIG_STRING_CHARS + 1)
    start, result = _turn(**{where: big})
    assert prompt_response_text("end_turn", start, result) is None
    start, result = _turn(**{where: big[:BIG_STRING_CHARS]})
    assert prompt_response_text("end_turn", start, result) == _generic_text(
        "end_turn", start, result
    )


def test_a_common_turn_is_written_whole() -> None:
    start, result = _turn()
    text = prompt_response_text("end_turn", start, result)
    assert text is not None
    assert json.loads(text) == {
        "_meta": {"acpBridge": turn_report(start, result)},
        "stopReason": "end_turn",
    }


def test_the_engine_states_are_written_without_escaping() -> None:
    # The text writes an attempt's state and a tool run's status between plain quotes.
    from json.encoder import encode_basestring

    for member in (*AttemptState, *ToolStatus):
        assert encode_basestring(member) == f'"{member}"'
