"""Effect keys by meaning (spec/effect-keys.md)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
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

from acp_bridge.providers import FinishReason
from acp_bridge.turn import EffectKey, EffectSteps, canonical_json, run_turn, turn_id_for

SPEC = Path(__file__).resolve().parents[2] / "spec" / "effect-keys.md"
REFUND = {"order_id": "ORD-7781"}


@pytest.mark.requirement("EFFECT-004")
@pytest.mark.requirement("EFFECT-001")
def test_c1_and_c7_with_the_same_name_and_arguments_have_the_same_key() -> None:
    # The provider call ids are not an input at all: the calls collapse by construction.
    c1 = EffectKey.derive("sess_7f3a-turn1", "issue_refund", {"order_id": "ORD-7781"})
    c7 = EffectKey.derive("sess_7f3a-turn1", "issue_refund", json.loads('{"order_id":"ORD-7781"}'))
    assert c1 == c7
    assert str(c1) == str(c7)
    assert re.fullmatch(r"[0-9a-f]{64}", str(c1))


@pytest.mark.requirement("EFFECT-001")
def test_different_arguments_turns_tools_or_steps_give_different_keys() -> None:
    base = EffectKey.derive("t-turn1", "issue_refund", REFUND)
    others = [
        EffectKey.derive("t-turn1", "issue_refund", {"order_id": "ORD-7782"}),
        EffectKey.derive("t-turn2", "issue_refund", REFUND),
        EffectKey.derive("t-turn1", "cancel_order", REFUND),
        EffectKey.derive("t-turn1", "issue_refund", REFUND, step=1),
    ]
    assert len({str(k) for k in [base, *others]}) == 5


@pytest.mark.requirement("EFFECT-001")
@pytest.mark.requirement("EFFECT-002")
@pytest.mark.requirement("EFFECT-003")
def test_the_examples_in_the_spec_hold() -> None:
    spec = SPEC.read_text(encoding="utf-8")
    key = EffectKey.derive("sess_7f3a-turn1", "issue_refund", REFUND)
    assert f"material: {key.material}" in spec
    assert f"key:      {key.digest}" in spec
    assert str(EffectKey.derive("sess_7f3a-turn1", "issue_refund", REFUND, 1)) in spec
    assert str(EffectKey.derive("sess_7f3a-turn2", "issue_refund", REFUND)) in spec
    arguments = {
        "reason": "Cafe\u0301 damaged",
        "amount": 25.0,
        "order_id": "ORD-7781",
        "items": [1, 2.5, -0.0],
    }
    canonical = canonical_json(arguments)  # type: ignore[arg-type]
    assert f"canonical: {canonical}" in spec
    assert str(EffectKey.derive("sess_7f3a-turn1", "issue_refund", arguments)) in spec  # type: ignore[arg-type]
    # The material is exactly the canonical JSON of the five-element array, hashed as ASCII.
    material = canonical_json([1, "sess_7f3a-turn1", "issue_refund", arguments, 0])  # type: ignore[list-item]
    assert hashlib.sha256(material.encode("ascii")).hexdigest() == str(
        EffectKey.derive("sess_7f3a-turn1", "issue_refund", arguments)  # type: ignore[arg-type]
    )


@pytest.mark.requirement("EFFECT-002")
def test_canonical_json_rules() -> None:
    assert canonical_json({"b": 1, "a": [True, None, "x"]}) == '{"a":[true,null,"x"],"b":1}'
    assert canonical_json("e\u0301") == canonical_json("\u00e9") == '"\\u00e9"'
    assert canonical_json("\U0001f600/\n") == '"\\ud83d\\ude00/\\n"'
    assert canonical_json({"\u00e9": 1, "z": 2, "Z": 3}) == '{"Z":3,"z":2,"\\u00e9":1}'
    with pytest.raises(ValueError, match="collide"):
        canonical_json({"e\u0301": 1, "\u00e9": 2})


@pytest.mark.requirement("EFFECT-003")
def test_canonical_numbers() -> None:
    assert canonical_json([10, 10.0, -0.0, 2.5, 1e-7, 1e300, 2**60, 2.0**60]) == (
        "[10,10,0,2.5,1e-07,1e+300,1152921504606846976,1.152921504606847e+18]"
    )
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="NaN and Infinity"):
            canonical_json([bad])


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(alphabet="abcXYZ\u00e9", max_size=3), children, max_size=4)
    ),
    max_leaves=12,
)


@given(json_values)
def test_canonical_json_is_a_fixed_point_and_ascii(value: object) -> None:
    once = canonical_json(value)  # type: ignore[arg-type]
    assert once.isascii()
    assert canonical_json(json.loads(once)) == once


@given(st.dictionaries(st.text(max_size=4), st.integers(), max_size=6))
def test_key_order_never_matters(arguments: dict[str, int]) -> None:
    reordered = dict(reversed(list(arguments.items())))
    assert EffectKey.derive("t", "x", arguments) == EffectKey.derive("t", "x", reordered)  # type: ignore[arg-type]


@pytest.mark.requirement("EFFECT-005")
def test_steps_count_repeats_of_the_same_meaning() -> None:
    steps = EffectSteps()
    assert steps.next_step("issue_refund", {"order_id": "A"}) == 0
    assert steps.next_step("issue_refund", {"order_id": "B"}) == 0
    assert steps.next_step("issue_refund", {"order_id": "A"}) == 1
    assert steps.next_step("cancel", {"order_id": "A"}) == 0
    assert steps.next_step("issue_refund", {"order_id": "A", "note": None}) == 0


@pytest.mark.anyio
@pytest.mark.requirement("EFFECT-005")
@pytest.mark.requirement("EFFECT-006")
async def test_a_deliberate_repeat_in_a_later_model_call_gets_the_next_step() -> None:
    refund = IssueRefund()
    provider = FakeProvider(
        [start(), *tool_call("c1", "issue_refund", REFUND), finish(FinishReason.TOOL_CALLS)],
        [start(), *tool_call("c2", "issue_refund", REFUND), finish(FinishReason.TOOL_CALLS)],
        [start(), *text("Refunded twice, as asked."), finish()],
    )
    sink = RecordingSink(["allow-always"])
    await run_turn(make_request(provider, sink, [refund]))
    assert [e.effect_key for e in refund.executions] == [
        str(EffectKey.derive("s1-turn1", "issue_refund", REFUND, 0)),
        str(EffectKey.derive("s1-turn1", "issue_refund", REFUND, 1)),
    ]


@pytest.mark.requirement("EFFECT-004")
def test_turn_ids_are_derived_from_session_and_ordinal() -> None:
    assert turn_id_for("sess_7f3a", 1) == "sess_7f3a-turn1"
    assert turn_id_for("sess_7f3a", 12) != turn_id_for("sess_7f3a", 1)
