"""Effect keys by meaning: arguments canonicalised against the tool's schema before keying
(EFFECT-CANON-001): the same action keys the same, different actions never collide."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from turn.turnkit import (
    FakeProvider,
    FakeTool,
    RecordingSink,
    finish,
    make_request,
    start,
    tool_call,
)

from acp_bridge._json import JsonObject
from acp_bridge.providers import FinishReason
from acp_bridge.tools import RunCommand, ToolKind, canonical_arguments
from acp_bridge.turn import EffectKey, EffectLedger, Turn, canonical_json

SCHEMA = RunCommand().parameters  # command (required), timeout_seconds (default 120)
DEFAULT = SCHEMA["properties"]["timeout_seconds"]["default"]  # type: ignore[index]


def key(arguments: JsonObject, schema: JsonObject = SCHEMA, **kw: Any) -> str:
    canonical = canonical_arguments(arguments, schema, **kw)
    return str(EffectKey.derive("s1-turn1", "run_command", canonical))


@pytest.mark.requirement("EFFECT-CANON-001")
def test_every_spelling_of_one_command_keys_the_same() -> None:
    spellings: list[JsonObject] = [
        {"command": "make test"},
        {"command": "make test", "timeout_seconds": DEFAULT},
        {"command": "make test", "timeout_seconds": float(DEFAULT)},
        {"command": "make test", "timeout_seconds": None},
        {"timeout_seconds": DEFAULT, "command": "make test", "verbose": True},
    ]
    keys = {key(s, ignore_unknown=True) for s in spellings}
    assert len(keys) == 1
    # A different timeout, a different command: different actions, different keys.
    assert key({"command": "make test", "timeout_seconds": 5}) not in keys
    assert key({"command": "make tests"}) not in keys


@pytest.mark.requirement("EFFECT-CANON-001")
def test_unknown_keys_stay_when_the_tool_may_read_them() -> None:
    # An MCP tool keyed by its inputSchema: an undeclared key may matter, so it is kept
    # unless the schema closes the object.
    open_schema: JsonObject = {"type": "object", "properties": {"a": {"type": "string"}}}
    closed: JsonObject = {**open_schema, "additionalProperties": False}
    assert canonical_arguments({"a": "x", "b": 1}, open_schema) == {"a": "x", "b": 1}
    assert canonical_arguments({"a": "x", "b": 1}, closed) == {"a": "x"}
    nested: JsonObject = {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"n": {"type": "integer", "default": 1}},
                },
            }
        },
    }
    assert canonical_arguments({"items": [{}, {"n": 2.0}]}, nested) == {
        "items": [{"n": 1}, {"n": 2}]
    }


commands = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
timeouts = st.one_of(
    st.none(), st.integers(1, 600), st.integers(1, 600).map(float), st.just(DEFAULT)
)
extras = st.dictionaries(st.sampled_from(["verbose", "why", "cwd"]), st.integers(), max_size=2)


def spelled(command: str, timeout: int | float | None, extra: dict[str, int]) -> JsonObject:
    arguments: JsonObject = {"command": command, **extra}
    if timeout is not None:
        arguments["timeout_seconds"] = timeout
    return arguments


def meaning(command: str, timeout: int | float | None) -> tuple[str, float]:
    """What the tool does: the command (NFC-equal strings are the same, EFFECT-002) and the
    timeout it uses."""
    return unicodedata.normalize("NFC", command), float(DEFAULT if timeout is None else timeout)


@pytest.mark.requirement("EFFECT-CANON-001")
@given(commands, timeouts, extras, commands, timeouts, extras)
def test_same_action_same_key_and_different_actions_never_collide(
    c1: str, t1: Any, x1: dict[str, int], c2: str, t2: Any, x2: dict[str, int]
) -> None:
    k1 = key(spelled(c1, t1, x1), ignore_unknown=True)
    k2 = key(spelled(c2, t2, x2), ignore_unknown=True)
    assert (k1 == k2) == (meaning(c1, t1) == meaning(c2, t2))


scalar_schemas = st.sampled_from(
    [
        {"type": "string"},
        {"type": "string", "default": "x"},
        {"type": "integer"},
        {"type": "integer", "default": 3},
        {"type": "number", "default": 2.5},
        {"type": "boolean", "default": False},
        {"type": ["string", "null"]},
    ]
)
schemas = st.dictionaries(st.sampled_from("abcd"), scalar_schemas, max_size=4).map(
    lambda props: {"type": "object", "properties": props}
)
values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(-5, 5, allow_nan=False),
    st.text(max_size=3),
)


@pytest.mark.requirement("EFFECT-CANON-001")
@given(schemas, st.dictionaries(st.sampled_from("abcde"), values, max_size=5))
def test_canonical_arguments_are_a_fixed_point_for_any_schema(
    schema: JsonObject, arguments: JsonObject
) -> None:
    once = canonical_arguments(arguments, schema)
    assert canonical_arguments(once, schema) == once
    # Spelling out every default the schema has changes nothing.
    props: dict[str, Any] = schema["properties"]  # type: ignore[assignment]
    spelled_out = dict(arguments)
    for name, sub in props.items():
        if "default" in sub and spelled_out.get(name) is None:
            spelled_out[name] = sub["default"]
    assert canonical_json(canonical_arguments(spelled_out, schema)) == canonical_json(once)


class Command(FakeTool):
    """A side-effecting tool with the real run_command schema."""

    ignores_unknown_arguments = True

    def __init__(self) -> None:
        super().__init__("run_command", kind=ToolKind.EXECUTE, required=("command",))
        self.parameters = dict(SCHEMA)


@pytest.mark.anyio
@pytest.mark.requirement("EFFECT-CANON-001")
async def test_a_rerun_that_spells_out_the_default_runs_the_command_once() -> None:
    ledger = EffectLedger.in_memory()
    tool = Command()
    for arguments in (
        {"command": "make deploy"},
        {"command": "make deploy", "timeout_seconds": DEFAULT},
    ):
        script = [
            start(),
            *tool_call("c1", "run_command", arguments),
            finish(FinishReason.TOOL_CALLS),
        ]
        provider = FakeProvider(script, [start(), finish()])
        # The same turn sent again (same turn id), its new generation spelling the default.
        await Turn(make_request(provider, RecordingSink(), [tool], ledger=ledger)).run()
    assert len(tool.executions) == 1
