"""Fixtures for the scripted provider's tests: build requests, play them, read the result."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import anyio
import pytest

from acp_bridge.providers import (
    AssistantTurn,
    Finish,
    Message,
    ModelProvider,
    ModelRequest,
    ModelStreamError,
    StreamEvent,
    StreamStart,
    TextDelta,
    ThoughtDelta,
    ToolCall,
    ToolCallComplete,
    ToolCallDelta,
    ToolCallStart,
    ToolResult,
    ToolResults,
    Usage,
    UserTurn,
)

Trace = list[tuple[object, ...]]


@dataclass
class Played:
    """What one attempt streamed, and how it ended."""

    events: list[StreamEvent] = field(default_factory=list)
    error: ModelStreamError | None = None

    @property
    def text(self) -> str:
        return "".join(e.text for e in self.events if isinstance(e, TextDelta))

    @property
    def thought(self) -> str:
        return "".join(e.text for e in self.events if isinstance(e, ThoughtDelta))

    @property
    def calls(self) -> list[ToolCallComplete]:
        return [e for e in self.events if isinstance(e, ToolCallComplete)]

    @property
    def finish(self) -> Finish | None:
        last = self.events[-1] if self.events else None
        return last if isinstance(last, Finish) else None

    def trace(self) -> Trace:
        """A compact, exact picture of the stream for equality assertions."""
        out: Trace = []
        for e in self.events:
            if isinstance(e, StreamStart):
                out.append(("start",))
            elif isinstance(e, TextDelta):
                out.append(("text", e.text))
            elif isinstance(e, ThoughtDelta):
                out.append(("thought", e.text, e.signature))
            elif isinstance(e, ToolCallStart):
                out.append(("call", e.call_id, e.name, e.index))
            elif isinstance(e, ToolCallDelta):
                out.append(("args", e.call_id, e.fragment))
            elif isinstance(e, ToolCallComplete):
                out.append(("done", e.call_id, e.name, e.arguments))
            elif isinstance(e, Usage):
                out.append(("usage", e.input_tokens, e.output_tokens))
            else:
                out.append(("finish", e.reason.value))
        if self.error is not None:
            out.append(("raise", self.error.kind.value, self.error.phase.value))
        return out


def make_request(
    prompt: str = "hi",
    *,
    call: int = 1,
    attempt: int = 1,
    history: Sequence[Message] = (),
    model: str = "",
) -> ModelRequest:
    """A request for model call `call` of a turn whose earlier calls each ran one tool."""
    messages: list[Message] = [*history, UserTurn((prompt,))]
    for round_ in range(1, call):
        tool_call = ToolCall(f"prior-{round_}", "read_file", {"path": "x"})
        messages.append(AssistantTurn(text="", tool_calls=(tool_call,)))
        messages.append(ToolResults((ToolResult(tool_call.call_id, "read_file", "ok"),)))
    return ModelRequest(model=model, messages=messages, attempt=attempt)


async def play_request(provider: ModelProvider, request: ModelRequest) -> Played:
    played = Played()
    with anyio.fail_after(5):
        try:
            async for event in provider.stream(request):
                played.events.append(event)
        except ModelStreamError as exc:
            played.error = exc
    return played


@pytest.fixture
def play() -> Callable[[ModelProvider, ModelRequest], Awaitable[Played]]:
    return play_request


@pytest.fixture
def request_for() -> Callable[..., ModelRequest]:
    return make_request
