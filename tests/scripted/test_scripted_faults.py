"""Injected faults: each raises the `ModelStreamError` a real adapter would, at its point."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from acp_bridge._json import JsonObject
from acp_bridge.providers import FaultKind, ModelProvider, ModelRequest, Phase, TextDelta
from acp_bridge.providers.scripted import ScriptedProvider, parse_script
from acp_bridge.providers.scripted._play import Pause, PlayContext, play_attempt

Player = Callable[[ModelProvider, ModelRequest], Awaitable[Any]]
RequestFor = Callable[..., ModelRequest]


def provider_for(
    *attempts: list[JsonObject], delay_ms: int | None = None, **top: Any
) -> ScriptedProvider:
    data: JsonObject = {
        "name": "faulty",
        "description": "faults",
        "calls": [{"attempts": [list(a) for a in attempts]}],
    }
    data.update(top)
    return ScriptedProvider(parse_script(data, source="faulty.json"), delay_ms=delay_ms)


BEFORE: list[JsonObject] = [
    {"text": ["Refunding the d", "am"]},
    {"tool_call": "write_file", "arguments": {"path": "a.txt", "content": "x"}},
]


@pytest.mark.anyio
@pytest.mark.requirement("SCRIPT-030")
@pytest.mark.parametrize(
    "kind",
    [
        "stream_interrupted",
        "incomplete_stream",
        "idle_timeout",
        "malformed_tool_call",
        "server_error",
        "overloaded",
        "rate_limited",
        "provider_error",
    ],
)
async def test_break_raises_its_kind_after_the_earlier_events(
    kind: str, play: Player, request_for: RequestFor
) -> None:
    played = await play(provider_for([*BEFORE, {"break": kind}]), request_for())
    assert [e[0] for e in played.trace()] == [
        "start",
        "text",
        "text",
        "call",
        "args",
        "args",
        "args",
        "args",
        "done",
        "raise",
    ]
    error = played.error
    # Retryability follows the kind: an unclassified provider error is not retried.
    retryable = kind != "provider_error"
    assert (error.kind, error.phase, error.retryable) == (FaultKind(kind), Phase.STREAM, retryable)
    assert (error.status, error.retry_after) == (None, None)
    assert "script 'faulty', call 1, attempt 1, step 3" in error.message


@pytest.mark.anyio
@pytest.mark.requirement("SCRIPT-030")
async def test_break_true_is_a_reset_and_options_pass_through(
    play: Player, request_for: RequestFor
) -> None:
    played = await play(provider_for([{"break": True}]), request_for())
    assert played.trace() == [("start",), ("raise", "stream_interrupted", "stream")]
    assert played.error.message.startswith("the connection was reset mid-stream")
    provider = provider_for([{"break": "rate_limited", "message": "slow down", "retry_after": 3}])
    played = await play(provider, request_for())
    assert played.error.kind is FaultKind.RATE_LIMITED
    assert played.error.retry_after == 3.0
    assert played.error.message.startswith("slow down (script 'faulty'")


@pytest.mark.anyio
@pytest.mark.requirement("SCRIPT-031")
async def test_refused_connection_yields_nothing(play: Player, request_for: RequestFor) -> None:
    played = await play(provider_for([{"refuse_connection": True}]), request_for())
    assert played.events == []
    error = played.error
    assert (error.kind, error.phase, error.retryable) == (
        FaultKind.CONNECTION_FAILED,
        Phase.CONNECT,
        True,
    )
    assert error.message.startswith("connection refused (script 'faulty'")


@pytest.mark.anyio
@pytest.mark.requirement("SCRIPT-032")
@pytest.mark.parametrize(
    ("status", "kind", "retryable"),
    [
        (429, FaultKind.RATE_LIMITED, True),
        (400, FaultKind.BAD_REQUEST, False),
        (401, FaultKind.AUTH_FAILED, False),
        (402, FaultKind.QUOTA_EXHAUSTED, False),
        (403, FaultKind.AUTH_FAILED, False),
        (404, FaultKind.NOT_FOUND, False),
        (408, FaultKind.SERVER_ERROR, True),
        (409, FaultKind.SERVER_ERROR, True),
        (413, FaultKind.BAD_REQUEST, False),
        (418, FaultKind.PROVIDER_ERROR, False),
        (422, FaultKind.BAD_REQUEST, False),
        (499, FaultKind.SERVER_ERROR, True),
        (500, FaultKind.SERVER_ERROR, True),
        (501, FaultKind.SERVER_ERROR, True),
        (502, FaultKind.SERVER_ERROR, True),
        (503, FaultKind.OVERLOADED, True),
        (504, FaultKind.SERVER_ERROR, True),
        (529, FaultKind.OVERLOADED, True),
    ],
)
async def test_http_errors_are_classified_like_a_real_adapter(
    status: int, kind: FaultKind, retryable: bool, play: Player, request_for: RequestFor
) -> None:
    provider = provider_for([{"http_error": status, "retry_after": 1}])
    played = await play(provider, request_for())
    assert played.events == []
    error = played.error
    assert (error.kind, error.phase, error.retryable) == (kind, Phase.CONNECT, retryable)
    assert (error.status, error.retry_after) == (status, 1.0)
    assert error.message.startswith(f"HTTP {status} ")


@pytest.mark.anyio
@pytest.mark.requirement("SCRIPT-032")
async def test_http_error_without_retry_after_and_with_a_message(
    play: Player, request_for: RequestFor
) -> None:
    played = await play(
        provider_for([{"http_error": 503, "message": "upstream busy"}]), request_for()
    )
    assert played.error.retry_after is None
    assert played.error.message.startswith("upstream busy (script 'faulty'")
    played = await play(provider_for([{"http_error": 599}]), request_for())
    assert played.error.message.startswith("HTTP 599 Error")


@pytest.mark.anyio
@pytest.mark.requirement("SCRIPT-033")
async def test_eof_is_an_incomplete_stream_not_a_finish(
    play: Player, request_for: RequestFor
) -> None:
    played = await play(provider_for([{"text": "Half an answ"}, {"eof": True}]), request_for())
    assert played.trace() == [
        ("start",),
        ("text", "Half "),
        ("text", "an "),
        ("text", "answ"),
        ("raise", "incomplete_stream", "stream"),
    ]
    assert played.finish is None
    assert (played.error.retryable, played.error.phase) == (True, Phase.STREAM)


@pytest.mark.requirement("SCRIPT-034")
def test_pauses_come_before_steps() -> None:
    script = parse_script(
        {
            "name": "paced",
            "description": "pauses",
            "delay_ms": 20,
            "calls": [
                {
                    "attempts": [
                        [
                            {"text": ["a", "b"]},
                            {"text": "c", "delay_ms": 500},
                            {"usage": {}},
                            {"finish": "stop", "delay_ms": 0},
                        ],
                        [{"refuse_connection": True, "delay_ms": 30}],
                    ]
                }
            ],
        }
    )
    context = PlayContext("paced", "scripted", "m", turn=1, call=1, attempt=1, delay_ms=20)
    kinds = [
        item if isinstance(item, Pause) else type(item).__name__
        for item in play_attempt(script.calls[0].attempts[0], context)
    ]
    assert kinds == [
        "StreamStart",
        "TextDelta",
        "TextDelta",
        Pause(0.5),
        "TextDelta",
        Pause(0.02),
        "Usage",
        "Finish",
    ]
    paced = PlayContext("paced", "scripted", "m", 1, 1, 1, delay_ms=20, pace_ms=5)
    pauses = [i for i in play_attempt(script.calls[0].attempts[0], paced) if isinstance(i, Pause)]
    assert pauses == [Pause(0.005)] * 3
    refused = play_attempt(script.calls[0].attempts[1], context)
    assert next(refused) == Pause(0.03)


@pytest.mark.anyio
@pytest.mark.requirement("SCRIPT-034")
async def test_provider_pace_zero_ignores_script_delays(
    play: Player, request_for: RequestFor
) -> None:
    slow: list[JsonObject] = [{"text": "a"}, {"text": "b", "delay_ms": 60_000}, {"finish": "stop"}]
    played = await play(provider_for(slow, delay_ms=0), request_for())
    assert played.text == "ab"


@pytest.mark.anyio
@pytest.mark.requirement("SCRIPT-034")
async def test_a_pause_is_cancellable(request_for: RequestFor) -> None:
    provider = provider_for(
        [{"text": "first"}, {"text": "never", "delay_ms": 60_000}, {"finish": "stop"}]
    )
    received: list[str] = []
    got_first = anyio.Event()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:

            async def consume() -> None:
                async for event in provider.stream(request_for()):
                    if isinstance(event, TextDelta):
                        received.append(event.text)
                        got_first.set()

            group.start_soon(consume)
            await got_first.wait()
            group.cancel_scope.cancel()
    assert received == ["first"]
