"""The built-in scripts, event by event: what each attempt of each model call streams."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from acp_bridge.providers import ModelProvider, ModelRequest, ThoughtDelta, Usage
from acp_bridge.providers.scripted import ScriptedProvider, ToolCallStep, builtin_scripts

Player = Callable[[ModelProvider, ModelRequest], Awaitable[Any]]
RequestFor = Callable[..., ModelRequest]
Trace = list[tuple[object, ...]]

START: Trace = [("start",)]


def text(*fragments: str) -> Trace:
    return [("text", fragment) for fragment in fragments]


def call(call_id: str, name: str, arguments: dict[str, Any], index: int = 0) -> Trace:
    """A tool call block with its argument deltas collapsed (checked apart, below)."""
    raw = json.dumps(arguments, ensure_ascii=False)
    return [
        ("call", call_id, name, index),
        ("args*", call_id, raw, 4),
        ("done", call_id, name, arguments),
    ]


def usage(input_tokens: int, output_tokens: int) -> Trace:
    return [("usage", input_tokens, output_tokens)]


def finish(reason: str) -> Trace:
    return [("finish", reason)]


def fault(kind: str, phase: str = "stream") -> Trace:
    return [("raise", kind, phase)]


def collapse(trace: Trace) -> Trace:
    """Fold each run of argument deltas into ("args*", id, joined, count)."""
    out: Trace = []
    for item in trace:
        if item[0] == "args" and out and out[-1][0] == "args*" and out[-1][1] == item[1]:
            _, call_id, joined, count = out[-1]
            out[-1] = ("args*", call_id, f"{joined}{item[2]}", int(str(count)) + 1)
        elif item[0] == "args":
            out.append(("args*", item[1], item[2], 1))
        else:
            out.append(item)
    return out


REFUND = {"order_id": "ORD-7781", "amount": "full"}
NOTE = {"path": "scripted-note.txt", "content": "Written once by acp-bridge's scripted model.\n"}
REFUND_FILE = {
    "path": "refunds/ORD-7781.txt",
    "content": "Full refund issued for order ORD-7781 (book arrived damaged).\n",
}
THEN_BREAK = {"path": "then-break.txt", "content": "Written by the completed attempt only.\n"}
ABANDONED = {"path": "abandoned.txt", "content": "This file must never be written.\n"}
KEPT = {"path": "kept.txt", "content": "Written by the completed attempt.\n"}
CHECKING = text("Checking ", "order ", "ORD-7781. ")
LOOKING = text("Looking ", "up ", "order ", "ORD-7781. ")
NOTE_OPENING = text("I ", "will ", "save ", "a ", "note ", "in ", "your ", "workspace. ")

# EXPECTED[name][call - 1][attempt - 1]: the collapsed trace of that attempt.
EXPECTED: dict[str, list[list[Trace]]] = {
    "hello": [
        [
            START
            + text("Hello! ", "You ", "said: ", "“hi”. ", "I ", "am ", "acp-bridge's ")
            + text("scripted ", "model: ", "no ", "key, ", "no ", "network. ", "Type ", "/ ")
            + text("to ", "try ", "a ", "scripted ", "scenario, ", "such ", "as ")
            + text("/broken-mid-word.")
            + usage(24, 32)
            + finish("stop")
        ]
    ],
    "broken-mid-word": [
        [
            START
            + text("The stream broke in the mid", "dle of a wo")
            + fault("stream_interrupted"),
            START
            + text("The ", "stream ", "broke ", "in ", "the ", "middle ", "of ", "a ", "word ")
            + text("and ", "the ", "bridge ", "retried ", "it. ", "You ", "should ", "read ")
            + text("this ", "sentence ", "exactly ", "once.")
            + usage(18, 23)
            + finish("stop"),
        ]
    ],
    "tool-call-broken-before-finish": [
        [
            START
            + NOTE_OPENING
            + call("c1", "write_file", NOTE)
            + text("The ", "note ", "is ", "ready.")
            + usage(40, 31)
            + fault("stream_interrupted"),
            START
            + NOTE_OPENING
            + call("c2", "write_file", NOTE)
            + text("The ", "note ", "is ", "ready.")
            + usage(40, 31)
            + finish("tool_calls"),
        ],
        [START + text("Saved ", "scripted-note.txt.") + usage(60, 6) + finish("stop")],
    ],
    "help-desk-refund": [
        [
            START
            + CHECKING
            + call("c1", "issue_refund", REFUND)
            + text("Refunding ", "the ", "dam")
            + fault("stream_interrupted"),
            START
            + LOOKING
            + call("c7", "issue_refund", REFUND)
            + text("The ", "book ", "arrived ", "damaged, ", "so ", "I ", "have ", "started ")
            + text("a ", "full ", "refund.")
            + usage(52, 38)
            + finish("tool_calls"),
        ],
        [
            START
            + text("Your ", "full ", "refund ", "for ", "order ", "ORD-7781 ", "is ", "on ")
            + text("its ", "way.")
            + usage(80, 12)
            + finish("stop")
        ],
    ],
    "help-desk-refund-file": [
        [
            START
            + CHECKING
            + call("c1", "write_file", REFUND_FILE)
            + text("Refunding ", "the ", "dam")
            + fault("stream_interrupted"),
            START
            + LOOKING
            + call("c7", "write_file", REFUND_FILE)
            + text("The ", "book ", "arrived ", "damaged, ", "so ", "I ", "have ", "recorded ")
            + text("a ", "full ", "refund.")
            + usage(52, 40)
            + finish("tool_calls"),
        ],
        [
            START
            + text("The ", "refund ", "for ", "order ", "ORD-7781 ", "is ", "recorded ", "in ")
            + text("refunds/ORD-7781.txt.")
            + usage(84, 16)
            + finish("stop")
        ],
    ],
    "tool-call-then-break": [
        [
            START
            + text("Creating ", "a ", "file. ")
            + call("scripted-1.1.1.0", "write_file", THEN_BREAK)
            + fault("stream_interrupted"),
            START
            + text("Creating ", "a ", "file. ")
            + call("scripted-1.1.2.0", "write_file", THEN_BREAK)
            + usage(30, 24)
            + finish("tool_calls"),
        ],
        [START + text("Created ", "then-break.txt.") + finish("stop")],
    ],
    "broken-twice": [
        [
            START + text("First try: the answ") + fault("stream_interrupted"),
            START + text("Second try: the answer is al") + fault("incomplete_stream"),
            START
            + text("Third ", "try: ", "the ", "answer ", "is ", "all ", "here, ", "and ", "you ")
            + text("see ", "it ", "once.")
            + usage(16, 14)
            + finish("stop"),
        ]
    ],
    "broken-thought": [
        [
            [
                *START,
                ("thought", "Let me think about ", None),
                ("thought", "how to ans", None),
                *fault("stream_interrupted"),
            ],
            START
            + [
                ("thought", word, None)
                for word in ("Let ", "me ", "think ", "about ", "how ", "to ", "answer ", "this ")
            ]
            + [("thought", "briefly.", "scripted-signature-1")]
            + text("Here ", "is ", "a ", "brief ", "answer, ", "thought ", "through ", "once.")
            + usage(20, 19)
            + finish("stop"),
        ]
    ],
    "tool-loop-break-second-call": [
        [
            START
            + text("Let ", "me ", "read ", "the ", "README. ")
            + call("scripted-1.1.1.0", "read_file", {"path": "README.md"})
            + usage(22, 17)
            + finish("tool_calls")
        ],
        [
            START + text("The README ", "descri") + fault("stream_interrupted"),
            START
            + text("The ", "README ", "describes ", "the ", "project. ", "I ", "read ", "it ")
            + text("once ", "and ", "answer ", "once.")
            + usage(64, 15)
            + finish("stop"),
        ],
    ],
    "rate-limited": [
        [
            fault("rate_limited", "connect"),
            START
            + text("Answered ", "after ", "the ", "rate ", "limit ", "cleared.")
            + usage(12, 8)
            + finish("stop"),
        ]
    ],
    "connection-refused": [
        [
            fault("connection_failed", "connect"),
            START
            + text("Answered ", "on ", "the ", "second ", "connection.")
            + usage(12, 7)
            + finish("stop"),
        ]
    ],
    "abandoned-write-and-command": [
        [
            START
            + text("I ", "will ", "write ", "a ", "file ", "and ", "run ", "a ", "command. ")
            + call("scripted-1.1.1.0", "write_file", ABANDONED)
            + call(
                "scripted-1.1.1.1",
                "run_command",
                {"command": "echo this command must never run"},
                index=1,
            )
            + text("Both are que")
            + fault("stream_interrupted"),
            START
            + text("One ", "file ", "is ", "enough. ")
            + call("scripted-1.1.2.0", "write_file", KEPT)
            + usage(36, 27)
            + finish("tool_calls"),
        ],
        [START + text("Wrote ", "kept.txt; ", "nothing ", "else ", "ran.") + finish("stop")],
    ],
}

CASES = [
    (name, call_no, attempt_no)
    for name, calls in EXPECTED.items()
    for call_no, attempts in enumerate(calls, start=1)
    for attempt_no in range(1, len(attempts) + 1)
]


@pytest.mark.requirement("SCRIPT-050")
def test_every_builtin_has_an_expected_stream() -> None:
    assert next(iter(builtin_scripts())) == "hello"
    assert set(builtin_scripts()) == set(EXPECTED)
    for name, script in builtin_scripts().items():
        assert script.description
        assert len(script.calls) == len(EXPECTED[name])
        assert [len(c.attempts) for c in script.calls] == [len(a) for a in EXPECTED[name]]


@pytest.mark.anyio
@pytest.mark.requirement("SCRIPT-020")
@pytest.mark.requirement("SCRIPT-021")
@pytest.mark.requirement("SCRIPT-023")
@pytest.mark.requirement("SCRIPT-025")
@pytest.mark.parametrize(("name", "call_no", "attempt_no"), CASES)
async def test_builtin_attempt_streams_exactly(
    name: str, call_no: int, attempt_no: int, play: Player, request_for: RequestFor
) -> None:
    provider = ScriptedProvider(delay_ms=0)
    prompt = "hi" if name == "hello" else f"/{name}"
    played = await play(provider, request_for(prompt, call=call_no, attempt=attempt_no))
    assert collapse(played.trace()) == EXPECTED[name][call_no - 1][attempt_no - 1]
    for event in played.calls:
        # The deltas of each call really split its JSON arguments, in several pieces.
        deltas = [t[2] for t in played.trace() if t[0] == "args" and t[1] == event.call_id]
        assert len(deltas) == 4
        assert all(deltas)
        assert "".join(deltas) == event.raw_arguments
        assert json.loads(event.raw_arguments) == event.arguments


@pytest.mark.anyio
@pytest.mark.requirement("SCRIPT-023")
async def test_help_desk_refund_fragments_split_the_arguments(
    play: Player, request_for: RequestFor
) -> None:
    played = await play(ScriptedProvider(), request_for("/help-desk-refund"))
    assert [t for t in played.trace() if t[0] == "args"] == [
        ("args", "c1", '{"order_id"'),
        ("args", "c1", ': "ORD-7781'),
        ("args", "c1", '", "amount'),
        ("args", "c1", '": "full"}'),
    ]
    # The seed's half sentence: the last fragment stops inside "damaged".
    assert played.text == "Checking order ORD-7781. Refunding the dam"
    assert played.error.message.startswith("connection reset by peer")


@pytest.mark.anyio
@pytest.mark.requirement("SCRIPT-011")
async def test_extra_attempts_repeat_the_last(play: Player, request_for: RequestFor) -> None:
    provider = ScriptedProvider()
    third = await play(provider, request_for("/broken-twice", attempt=3))
    fifth = await play(provider, request_for("/broken-twice", attempt=5))
    assert collapse(fifth.trace()) == collapse(third.trace())


@pytest.mark.anyio
@pytest.mark.requirement("SCRIPT-022")
@pytest.mark.requirement("SCRIPT-024")
async def test_broken_thought_signature_and_reasoning_usage(
    play: Player, request_for: RequestFor
) -> None:
    played = await play(ScriptedProvider(), request_for("/broken-thought", attempt=2))
    thoughts = [e for e in played.events if isinstance(e, ThoughtDelta)]
    assert [t.signature for t in thoughts].count("scripted-signature-1") == 1
    assert thoughts[-1].signature == "scripted-signature-1"
    assert played.thought == "Let me think about how to answer this briefly."
    (reported,) = [e for e in played.events if isinstance(e, Usage)]
    assert reported == Usage(20, 19, 0, 9)


@pytest.mark.anyio
@pytest.mark.requirement("SCRIPT-023")
async def test_a_retried_call_never_keeps_its_provider_id(
    play: Player, request_for: RequestFor
) -> None:
    provider = ScriptedProvider()
    for name, script in builtin_scripts().items():
        for call_no, script_call in enumerate(script.calls, start=1):
            seen: dict[str, int] = {}
            for attempt_no in range(1, len(script_call.attempts) + 1):
                played = await play(
                    provider, request_for(f"/{name}", call=call_no, attempt=attempt_no)
                )
                for event in played.calls:
                    assert seen.setdefault(event.call_id, attempt_no) == attempt_no, name


@pytest.mark.anyio
async def test_synthesized_ids_differ_between_turns(play: Player, request_for: RequestFor) -> None:
    provider = ScriptedProvider()
    first = await play(provider, request_for("/tool-call-then-break", attempt=2))
    history = [*request_for("/x").messages]
    second = await play(provider, request_for("/tool-call-then-break", attempt=2, history=history))
    assert [c.call_id for c in first.calls] == ["scripted-1.1.2.0"]
    assert [c.call_id for c in second.calls] == ["scripted-2.1.2.0"]


@pytest.mark.requirement("SCRIPT-041")
def test_builtin_tool_paths_are_relative_to_the_session_cwd() -> None:
    paths = [
        step.arguments["path"]
        for script in builtin_scripts().values()
        for script_call in script.calls
        for attempt in script_call.attempts
        for step in attempt.steps
        if isinstance(step, ToolCallStep) and "path" in step.arguments
    ]
    assert "refunds/ORD-7781.txt" in paths
    for path in paths:
        assert isinstance(path, str)
        assert not path.startswith(("/", "~", "${"))
        assert ".." not in path.split("/")
