"""The script file format: what parses, what is rejected, and how errors say where."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from acp_bridge._json import JsonObject
from acp_bridge.providers import FaultKind, FinishReason
from acp_bridge.providers.scripted import (
    BreakStep,
    EofStep,
    FinishStep,
    HttpErrorStep,
    RefuseConnectionStep,
    ScriptError,
    TextStep,
    ThoughtStep,
    ToolCallStep,
    UsageStep,
    load_script,
    loads_script,
    parse_script,
)
from acp_bridge.providers.scripted._steps import split_evenly


def script_with(*attempts: list[JsonObject], **top: Any) -> JsonObject:
    data: JsonObject = {
        "name": "t",
        "description": "a test script",
        "calls": [{"attempts": [list(a) for a in attempts]}],
    }
    data.update(top)
    return data


FINISH: JsonObject = {"finish": "stop"}


@pytest.mark.requirement("SCRIPT-001")
@pytest.mark.requirement("SCRIPT-003")
def test_a_full_script_parses_into_the_model() -> None:
    data = {
        "version": 1,
        "name": "all-steps",
        "description": "every step kind",
        "input_hint": "say anything",
        "delay_ms": 5,
        "comment": "for people",
        "calls": [
            {
                "comment": "call one",
                "attempts": [
                    [{"refuse_connection": True, "message": "nope"}],
                    [{"http_error": 503, "retry_after": 2}],
                    [{"text": "x"}, {"eof": True}],
                    [
                        {"text": ["He", "llo"], "delay_ms": 7, "comment": "c"},
                        {"thought": "hmm", "signature": "s"},
                        {"tool_call": "write_file", "id": "c1", "arguments": {"path": "a"}},
                        {"usage": {"input_tokens": 3, "reasoning_tokens": 1}},
                        {"finish": "auto", "raw_reason": "tool_use"},
                    ],
                ],
            },
            {"attempts": [[{"text": "a"}, {"break": True}]]},
        ],
    }
    script = parse_script(data, source="all.json")
    assert (script.name, script.description, script.input_hint) == (
        "all-steps",
        "every step kind",
        "say anything",
    )
    assert script.delay_ms == 5
    assert script.source == "all.json"
    first = script.calls[0].attempts
    assert first[0].steps == (RefuseConnectionStep(message="nope"),)
    assert first[1].steps == (HttpErrorStep(status=503, retry_after=2.0),)
    assert first[2].steps == (TextStep("x"), EofStep())
    text, thought, call, usage, finish = first[3].steps
    assert text == TextStep("Hello", ("He", "llo"), delay_ms=7)
    assert thought == ThoughtStep("hmm", signature="s")
    assert isinstance(call, ToolCallStep)
    assert (call.name, call.call_id, call.arguments) == ("write_file", "c1", {"path": "a"})
    assert call.raw_arguments == '{"path": "a"}'
    assert "".join(call.fragments) == call.raw_arguments
    assert len(call.fragments) == 4
    assert usage == UsageStep(input_tokens=3, reasoning_tokens=1)
    assert finish == FinishStep(None, "tool_use")
    assert script.calls[1].attempts[0].steps[1] == BreakStep(FaultKind.STREAM_INTERRUPTED)


@pytest.mark.requirement("SCRIPT-023")
def test_tool_call_fragment_forms() -> None:
    data = script_with(
        [
            {"tool_call": "a", "arguments": {"k": "vvvvvvvv"}, "fragments": 3},
            {"tool_call": "b", "fragments": ['{"k"', ": 1}"]},
            {"tool_call": "c", "arguments": {"k": 1}, "fragments": ["", '{"k": 1}']},
            {"tool_call": "d", "arguments": {"é": "ü"}, "fragments": 1},
            FINISH,
        ]
    )
    a, b, c, d, _ = parse_script(data).calls[0].attempts[0].steps
    assert isinstance(a, ToolCallStep)
    assert isinstance(b, ToolCallStep)
    assert isinstance(c, ToolCallStep)
    assert isinstance(d, ToolCallStep)
    assert a.fragments == ('{"k": ', '"vvvvv', 'vvv"}')
    assert (b.arguments, b.raw_arguments, b.fragments) == ({"k": 1}, '{"k": 1}', ('{"k"', ": 1}"))
    assert c.fragments == ("", '{"k": 1}')
    # Non-ASCII is kept as is, not escaped.
    assert d.fragments == ('{"é": "ü"}',)


def test_split_evenly_covers_the_text_in_order() -> None:
    assert split_evenly("abcdefgh", 3) == ("abc", "def", "gh")
    assert split_evenly("ab", 5) == ("a", "b")
    assert split_evenly("abc", 1) == ("abc",)


@pytest.mark.requirement("SCRIPT-025")
def test_finish_reasons_parse() -> None:
    for reason in FinishReason:
        step = parse_script(script_with([{"finish": reason.value}])).calls[0].attempts[0].steps[0]
        assert step == FinishStep(reason)


@pytest.mark.requirement("SCRIPT-030")
def test_break_kinds_parse() -> None:
    step = (
        parse_script(script_with([{"break": "overloaded", "message": "busy", "retry_after": 1.5}]))
        .calls[0]
        .attempts[0]
        .steps[0]
    )
    assert step == BreakStep(FaultKind.OVERLOADED, "busy", 1.5)


INVALID: list[tuple[str, JsonObject, str]] = [
    ("top level not an object", [], "a script must be a JSON object"),  # type: ignore[list-item]
    ("missing name", {"description": "d", "calls": []}, "missing required key 'name'"),
    ("bad name", script_with([FINISH], name="Hello World"), "'name' must be 1-64 characters"),
    ("name too long", script_with([FINISH], name="a" * 65), "'name' must be 1-64"),
    ("empty description", script_with([FINISH], description=""), "'description' must be a"),
    ("bad version", script_with([FINISH], version=2), "'version' must be 1"),
    ("unknown top key", script_with([FINISH], steps=[]), "unknown key 'steps' in script"),
    ("no calls", script_with([FINISH], calls=[]), "'calls' must be a non-empty list"),
    ("bad delay", script_with([FINISH], delay_ms=-1), "'delay_ms' must be a whole number"),
]


@pytest.mark.requirement("SCRIPT-001")
@pytest.mark.requirement("SCRIPT-002")
@pytest.mark.parametrize(("case", "data", "problem"), INVALID, ids=[c[0] for c in INVALID])
def test_invalid_scripts_are_rejected(case: str, data: JsonObject, problem: str) -> None:
    with pytest.raises(ScriptError) as caught:
        parse_script(data, source="bad.json")
    assert str(caught.value).startswith("bad.json: ")
    assert problem in caught.value.problem
    assert caught.value.call is None


STEP_ERRORS: list[tuple[str, list[JsonObject], int, str]] = [
    ("no kind", [{"delay_ms": 1}, FINISH], 1, "a step needs exactly one of"),
    ("two kinds", [{"text": "a", "finish": "stop"}], 1, "found text, finish"),
    ("option of another kind", [{"text": "a", "signature": "s"}, FINISH], 1, "unknown key"),
    ("typo", [{"tool_call": "x", "argumens": {}}, FINISH], 1, "unknown key 'argumens'"),
    ("empty text", [{"text": ""}, FINISH], 1, "'text' must be a non-empty string"),
    ("empty fragment", [{"text": ["a", ""]}, FINISH], 1, "non-empty list of non-empty"),
    ("no finish", [{"text": "a"}], 1, "an attempt must end with 'finish' or a fault"),
    ("after finish", [FINISH, {"text": "a"}], 1, "must be the last step"),
    ("late refusal", [{"text": "a"}, {"refuse_connection": True}], 2, "must be the only step"),
    ("late http error", [{"text": "a"}, {"http_error": 429}], 2, "must be the only step"),
    ("status range", [{"http_error": 302}], 1, "HTTP error status (400-599)"),
    ("status type", [{"http_error": "429"}], 1, "HTTP error status"),
    ("eof false", [{"eof": False}], 1, "'eof' takes the value true"),
    ("break kind", [{"break": "connection_failed"}], 1, "'break' must be true or one of"),
    ("finish reason", [{"finish": "done"}], 1, "'finish' must be 'auto' or one of"),
    ("usage key", [{"usage": {"tokens": 1}}, FINISH], 1, "unknown key 'tokens' in 'usage'"),
    ("usage count", [{"usage": {"input_tokens": -1}}, FINISH], 1, "whole number >= 0"),
    ("usage bool", [{"usage": {"input_tokens": True}}, FINISH], 1, "whole number >= 0"),
    ("args not object", [{"tool_call": "x", "arguments": [1]}, FINISH], 1, "JSON object"),
    ("no args", [{"tool_call": "x"}, FINISH], 1, "needs 'arguments'"),
    ("zero fragments", [{"tool_call": "x", "arguments": {}, "fragments": 0}, FINISH], 1, "count"),
    ("bad json", [{"tool_call": "x", "fragments": ['{"a"']}, FINISH], 1, "valid JSON"),
    ("json array", [{"tool_call": "x", "fragments": ["[1]"]}, FINISH], 1, "JSON object"),
    (
        "mismatch",
        [{"tool_call": "x", "arguments": {"a": 2}, "fragments": ['{"a": 1}']}, FINISH],
        1,
        "different arguments",
    ),
    ("empty name", [{"tool_call": "", "arguments": {}}, FINISH], 1, "the tool name"),
    ("empty id", [{"tool_call": "x", "arguments": {}, "id": ""}, FINISH], 1, "'id'"),
    ("retry_after", [{"http_error": 429, "retry_after": -1}], 1, "'retry_after' must be"),
    ("step delay", [{"text": "a", "delay_ms": 1.5}, FINISH], 1, "'delay_ms' must be"),
    ("not an object", ["text", FINISH], 1, "a step must be an object"),  # type: ignore[list-item]
]


@pytest.mark.requirement("SCRIPT-004")
@pytest.mark.requirement("SCRIPT-005")
@pytest.mark.requirement("SCRIPT-051")
@pytest.mark.parametrize(
    ("case", "steps", "step", "problem"), STEP_ERRORS, ids=[c[0] for c in STEP_ERRORS]
)
def test_step_errors_name_call_attempt_and_step(
    case: str, steps: list[JsonObject], step: int, problem: str
) -> None:
    data = script_with([{"text": "ok"}, FINISH], steps)
    with pytest.raises(ScriptError) as caught:
        parse_script(data, source="refund.json")
    error = caught.value
    assert (error.source, error.call, error.attempt, error.step) == ("refund.json", 1, 2, step)
    assert problem in error.problem
    assert str(error) == f"refund.json: call 1, attempt 2, step {step}: {error.problem}"


@pytest.mark.requirement("SCRIPT-003")
def test_empty_attempts_and_bad_calls_are_rejected() -> None:
    cases: list[tuple[JsonObject, str, tuple[int | None, int | None]]] = [
        (script_with(calls=[{"attempts": []}]), "'attempts' must be a non-empty list", (1, None)),
        (script_with(calls=[{"attempts": [[]]}]), "non-empty list of steps", (1, 1)),
        (script_with(calls=[[[FINISH]]]), "a call must be an object", (1, None)),
        (
            script_with(calls=[{"attempts": [[FINISH]], "x": 1}]),
            "unknown key 'x' in call",
            (1, None),
        ),
    ]
    for data, problem, (call, attempt) in cases:
        with pytest.raises(ScriptError) as caught:
            parse_script(data)
        assert problem in caught.value.problem
        assert (caught.value.call, caught.value.attempt) == (call, attempt)


@pytest.mark.requirement("SCRIPT-051")
def test_json_syntax_errors_say_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "refund.json"
    path.write_text('{\n  "name": "x"\n  "description": "d"\n}\n', encoding="utf-8")
    with pytest.raises(ScriptError) as caught:
        load_script(path)
    assert str(caught.value) == (
        f"{path}: not valid JSON: Expecting ',' delimiter (line 3, column 3)"
    )


@pytest.mark.requirement("SCRIPT-051")
def test_unreadable_files_are_script_errors(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match="cannot read the script file"):
        load_script(tmp_path / "missing.json")
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"name": "\xe9"}')
    with pytest.raises(ScriptError, match="cannot read the script file"):
        load_script(latin)


def test_load_script_reads_a_file(tmp_path: Path) -> None:
    path = tmp_path / "mine.json"
    data = script_with([{"text": "from a file"}, FINISH], name="mine")
    path.write_text(json.dumps(data), encoding="utf-8")
    script = load_script(path)
    assert script.name == "mine"
    assert script.source == str(path)
    assert loads_script(json.dumps(data)) == parse_script(copy.deepcopy(data))
