"""Fragment splitting never changes meaning: any split plays to the same text and calls."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.providers import (
    Finish,
    ModelRequest,
    TextDelta,
    ThoughtDelta,
    ToolCallComplete,
    ToolCallDelta,
    UserTurn,
)
from acp_bridge.providers.scripted import ScriptedProvider, parse_script

# "$" is left out so that no text accidentally spells the `${prompt}` placeholder.
TEXT = st.text(st.characters(blacklist_characters="$", blacklist_categories=["Cs"]), min_size=1)
JSON_VALUES: st.SearchStrategy[JsonValue] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
ARGUMENTS = st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=4)
TOOL = st.tuples(st.just("tool"), st.text(min_size=1, max_size=12), ARGUMENTS)
SEGMENTS = st.lists(
    st.one_of(st.tuples(st.just("text"), TEXT), st.tuples(st.just("thought"), TEXT), TOOL),
    min_size=1,
    max_size=6,
)


@st.composite
def cuts(draw: st.DrawFn, text: str) -> list[str]:
    """`text` cut at random places into non-empty, contiguous pieces."""
    points = sorted(draw(st.sets(st.integers(1, max(len(text) - 1, 1)), max_size=5)))
    points = [p for p in points if 0 < p < len(text)]
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


@st.composite
def steps_for(draw: st.DrawFn, segments: list[tuple[Any, ...]]) -> list[JsonObject]:
    """One way of writing `segments` as steps: strings, fragment lists, counts, splits."""
    steps: list[JsonObject] = []
    for segment in segments:
        if segment[0] in ("text", "thought"):
            kind, text = segment
            value: JsonValue = list(draw(cuts(text))) if draw(st.booleans()) else text
            steps.append({str(kind): value})
        else:
            _, name, arguments = segment
            form = draw(st.sampled_from(["default", "count", "list"]))
            step: JsonObject = {"tool_call": name, "arguments": arguments}
            if form == "count":
                step["fragments"] = draw(st.integers(1, 12))
            elif form == "list":
                step["fragments"] = list(draw(cuts(json.dumps(arguments, ensure_ascii=False))))
            steps.append(step)
    steps.append({"finish": "auto"})
    return steps


def script_of(steps: list[JsonObject]) -> ScriptedProvider:
    attempt: list[JsonValue] = list(steps)
    data: JsonObject = {
        "name": "random",
        "description": "generated",
        "calls": [{"attempts": [attempt]}],
    }
    return ScriptedProvider(parse_script(data))


@dataclass
class Accumulated:
    """What a consumer keeps from one attempt: text, thoughts, calls, finish reason."""

    text: str = ""
    thought: str = ""
    calls: list[tuple[str, JsonObject]] = field(default_factory=list)
    finish: str | None = None
    deltas: dict[str, list[str]] = field(default_factory=dict)
    raw: dict[str, str] = field(default_factory=dict)
    empty_deltas: int = 0


async def accumulate(provider: ScriptedProvider) -> Accumulated:
    seen = Accumulated()
    request = ModelRequest("m", [UserTurn(("go",))])
    with anyio.fail_after(5):
        async for event in provider.stream(request):
            if isinstance(event, TextDelta | ThoughtDelta):
                seen.empty_deltas += not event.text
            if isinstance(event, TextDelta):
                seen.text += event.text
            elif isinstance(event, ThoughtDelta):
                seen.thought += event.text
            elif isinstance(event, ToolCallDelta):
                seen.deltas.setdefault(event.call_id, []).append(event.fragment)
            elif isinstance(event, ToolCallComplete):
                seen.calls.append((event.name, event.arguments))
                seen.raw[event.call_id] = event.raw_arguments
            elif isinstance(event, Finish):
                seen.finish = event.reason.value
    return seen


def meaning(seen: Accumulated) -> tuple[str, str, list[tuple[str, JsonObject]], str | None]:
    return seen.text, seen.thought, seen.calls, seen.finish


# A sync test that drives the provider with `anyio.run`: hypothesis draws stay outside the
# event loop, where its control flow (StopTest on overrun) belongs.
@pytest.mark.requirement("SCRIPT-021")
@pytest.mark.requirement("SCRIPT-023")
@settings(max_examples=60)
@given(data=st.data(), segments=SEGMENTS)
def test_any_split_plays_to_the_same_meaning(
    data: st.DataObject, segments: list[tuple[Any, ...]]
) -> None:
    first = data.draw(steps_for(segments))
    second = data.draw(steps_for(segments))
    one = anyio.run(accumulate, script_of(first))
    two = anyio.run(accumulate, script_of(second))
    assert meaning(one) == meaning(two)

    text = "".join(s[1] for s in segments if s[0] == "text")
    thought = "".join(s[1] for s in segments if s[0] == "thought")
    calls = [(s[1], s[2]) for s in segments if s[0] == "tool"]
    reason = "tool_calls" if calls else "stop"
    assert meaning(one) == (text, thought, calls, reason)

    for seen in (one, two):
        # Each call's deltas join to its raw JSON; no text or thought delta is empty.
        assert {k: "".join(v) for k, v in seen.deltas.items()} == seen.raw
        assert seen.empty_deltas == 0
