"""The light replay of tool calls, plans and the restored usage equals the wire models'.

`session/load` builds a stored tool call's `tool_call` (and its plan) and the usage_update that
replays the kept usage as plain dicts (`agent/_replay_wire.py`, `LiveUpdates.restore`); the
ACP models they stand for are the reference. Over generated calls and snapshots (hypothesis)
the two are equal key order included, so they cannot drift (PERF-LOAD-005).
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_bridge import protocol as acp
from acp_bridge.agent._live import LiveUpdates
from acp_bridge.agent._replay import replay_params, replay_updates
from acp_bridge.agent._replay_wire import tool_call_lines
from acp_bridge.sessions import StoredToolCall
from acp_bridge.tools import (
    DiffContent,
    Location,
    MediaContent,
    TerminalContent,
    TextContent,
    ToolKind,
)
from acp_bridge.tools._plan import PLAN_OUTPUT_KEY
from acp_bridge.turn import ToolStatus

# Every character but a lone surrogate: there the models and the plain dicts differ by design
# (pydantic writes U+FFFD, the wire writes its \\uXXXX escape: wire/_framing.py), and nothing
# the bridge stores holds one (what the editor sends is refused or scrubbed: jsonrpc/_limits.py).
texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
optional_texts = st.none() | texts
media = st.builds(
    MediaContent,
    kind=st.sampled_from(["image", "audio", "resource"]),
    mime_type=texts,
    data=texts,
    uri=optional_texts,
    text=optional_texts,
)
contents = st.one_of(
    st.builds(TextContent, texts),
    st.builds(DiffContent, path=texts, new_text=texts, old_text=optional_texts),
    st.builds(TerminalContent, texts),
    media,
)
locations = st.builds(Location, texts, st.none() | st.integers(0, 2**32 - 1))
plan_entries = st.lists(
    st.fixed_dictionaries(
        {
            "content": st.text(min_size=1, max_size=8).filter(str.strip),
            "priority": st.sampled_from(["high", "medium", "low"]),
            "status": st.sampled_from(["pending", "in_progress", "completed"]),
        }
    ),
    min_size=1,
    max_size=3,
)
raw_outputs = json_values | st.builds(lambda e: {PLAN_OUTPUT_KEY: e}, plan_entries)
calls = st.builds(
    StoredToolCall,
    tool_call_id=texts,
    model_call=st.integers(1, 4),
    position=st.integers(1, 4),
    title=texts,
    kind=st.sampled_from(list(ToolKind)),
    status=st.sampled_from(list(ToolStatus)),
    content=st.lists(contents, max_size=4).map(tuple),
    locations=st.lists(locations, max_size=3).map(tuple),
    raw_input=json_values,
    raw_output=raw_outputs,
)


def _same(plain: Any, model: Any) -> None:
    assert json.dumps(plain) == json.dumps(model)  # key order included


@pytest.mark.requirement("PERF-LOAD-005")
@given(calls)
def test_a_replayed_tool_call_is_the_wire_models_tool_call(call: StoredToolCall) -> None:
    models = [acp.to_wire(u) for u in replay_updates(call)]
    _same(tool_call_lines(call), models)
    # and the replay's params, which the lines are encoded from, are built from them
    _same(replay_params("sess_1", call), [{"sessionId": "sess_1", "update": m} for m in models])


@pytest.mark.requirement("PERF-LOAD-005")
def test_a_planning_call_replays_its_plan() -> None:
    entries = [{"content": "Read", "priority": "high", "status": "completed"}]
    call = StoredToolCall(
        "t1",
        1,
        1,
        "Plan",
        ToolKind.THINK,
        ToolStatus.COMPLETED,
        raw_output={PLAN_OUTPUT_KEY: entries},
    )
    lines = tool_call_lines(call)
    assert [u["sessionUpdate"] for u in lines] == ["tool_call", "plan"]
    assert lines[1]["entries"] == entries


def _restored_by_the_models(snapshot: dict[str, Any]) -> dict[str, Any] | None:
    """What `restore` answered before, through the models: `to_wire(UsageUpdate(...))`."""
    used, size, cost = snapshot.get("used"), snapshot.get("size"), snapshot.get("cost")
    if not isinstance(used, int) or not isinstance(size, int) or isinstance(used, bool):
        return None
    meta = {"replayed": True, "sizeSource": snapshot.get("sizeSource")}
    fields: dict[str, Any] = {"used": used, "size": size, "field_meta": {"acpBridge": meta}}
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        fields["cost"] = acp.Cost(amount=float(cost), currency="USD")
    return acp.to_wire(acp.UsageUpdate(**fields))


counts = st.integers(0, 2**64 - 1) | st.sampled_from([0, 1, 2**64 - 1])
snapshots = st.fixed_dictionaries(
    {"used": counts, "size": counts},
    optional={
        "cost": st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**53), 2**53),
        "sizeSource": json_values,
    },
)


@pytest.mark.requirement("PERF-LOAD-005")
@given(snapshots)
def test_the_restored_usage_update_is_the_wire_models_one(snapshot: dict[str, Any]) -> None:
    live = LiveUpdates("m")
    _same(live.restore(snapshot), _restored_by_the_models(snapshot))
    assert live.used == snapshot["used"]
    assert live.cost == (float(snapshot["cost"]) if "cost" in snapshot else None)


@pytest.mark.requirement("PERF-LOAD-005")
@pytest.mark.parametrize(
    "snapshot",
    [
        {"size": 10},
        {"used": "1", "size": 10},
        {"used": True, "size": 10},
        {"used": -1, "size": 10},  # the model refused it with a ValidationError
        {"used": 1, "size": 2**64},
    ],
)
def test_a_snapshot_that_is_not_one_restores_nothing(snapshot: dict[str, Any]) -> None:
    assert LiveUpdates("m").restore(snapshot) is None


@pytest.mark.requirement("PERF-LOAD-005")
def test_a_non_finite_cost_is_no_cost() -> None:
    live = LiveUpdates("m")
    restored = live.restore({"used": 1, "size": 10, "cost": math.inf})
    assert restored is not None
    assert "cost" not in restored
    assert live.cost is None
