"""Fakes for the turn engine's tests: a scripted provider, tools, a recording sink, reducers.

Imported by the tests in this folder as ``from turn.turnkit import ...`` (``tests/`` is on
sys.path and ``tests/turn`` is a namespace package).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel

from acp_bridge._json import JsonObject
from acp_bridge.errors import ToolError
from acp_bridge.providers import (
    FaultKind,
    Finish,
    FinishReason,
    Message,
    ModelRequest,
    ModelStreamError,
    StreamEvent,
    StreamStart,
    TextDelta,
    ThoughtDelta,
    ToolCallComplete,
    ToolCallDelta,
    ToolCallStart,
    Usage,
    UserTurn,
)
from acp_bridge.tools._base import (
    DiffContent,
    Location,
    TextContent,
    ToolContext,
    ToolKind,
    ToolOutcome,
    ToolPreview,
)
from acp_bridge.turn import (
    AgentText,
    AgentThought,
    EffectLedger,
    PermissionDecision,
    PermissionMemory,
    PermissionOption,
    ResetMarker,
    RetryPolicy,
    SessionMode,
    ToolCallChanged,
    ToolCallShown,
    Turn,
    TurnRequest,
    TurnUpdate,
)

WORKSPACE = Path("/work/ws")

# -- scripts ---------------------------------------------------------------------------------


@dataclass
class Hold:
    """A point where a stream (or a permission answer, or a tool run) waits to be released."""

    reached: anyio.Event = field(default_factory=anyio.Event)
    release: anyio.Event = field(default_factory=anyio.Event)

    async def wait(self) -> None:
        self.reached.set()
        await self.release.wait()


ScriptItem = StreamEvent | ModelStreamError | Hold


def start() -> StreamStart:
    return StreamStart(provider="fake", model="fake-model")


def text(*fragments: str) -> list[StreamEvent]:
    return [TextDelta(f) for f in fragments]


def thought(*fragments: str, signature: str | None = None) -> list[StreamEvent]:
    events: list[StreamEvent] = [ThoughtDelta(f) for f in fragments]
    if signature is not None:
        events.append(ThoughtDelta("", signature=signature))
    return events


def tool_call(call_id: str, name: str, arguments: JsonObject, index: int = 0) -> list[StreamEvent]:
    """A call the way providers stream it: start, argument fragments, complete."""
    import json

    raw = json.dumps(arguments)
    half = len(raw) // 2
    return [
        ToolCallStart(call_id, name, index),
        ToolCallDelta(call_id, index, raw[:half]),
        ToolCallDelta(call_id, index, raw[half:]),
        ToolCallComplete(call_id, name, arguments, raw),
    ]


def finish(reason: FinishReason = FinishReason.STOP) -> Finish:
    return Finish(reason)


def usage(input_tokens: int = 10, output_tokens: int = 5) -> Usage:
    return Usage(input_tokens=input_tokens, output_tokens=output_tokens)


def broken(kind: FaultKind = FaultKind.STREAM_INTERRUPTED, **kw: Any) -> ModelStreamError:
    return ModelStreamError(kind, f"injected {kind.value}", **kw)


class FakeProvider:
    """Plays one script per attempt, in order; records every request it got."""

    name = "fake"
    model = "fake-model"

    def __init__(self, *scripts: Sequence[ScriptItem]) -> None:
        self.scripts = [list(s) for s in scripts]
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        assert self.scripts, "the model was called more often than scripted"
        for item in self.scripts.pop(0):
            await anyio.lowlevel.checkpoint()
            if isinstance(item, ModelStreamError):
                raise item
            if isinstance(item, Hold):
                await item.wait()
                continue
            yield item


# -- tools -----------------------------------------------------------------------------------


@dataclass
class Execution:
    arguments: JsonObject
    effect_key: str | None


class FakeTool:
    """A tool that records every run with its effect key."""

    def __init__(
        self,
        name: str,
        *,
        kind: ToolKind = ToolKind.OTHER,
        side_effect: bool = True,
        required: Sequence[str] = (),
        hold: Hold | None = None,
        fail_with: BaseException | None = None,
    ) -> None:
        self.name = name
        self.description = f"fake {name}"
        self.parameters: JsonObject = {
            "type": "object",
            "properties": {k: {"type": "string"} for k in required},
            "required": list(required),
        }
        self.kind = kind
        self.side_effect = side_effect
        self.required = tuple(required)
        self.hold = hold
        self.fail_with = fail_with
        self.executions: list[Execution] = []
        self.previews = 0

    def title(self, arguments: JsonObject) -> str:
        return f"{self.name} {' '.join(str(v) for v in arguments.values())}".strip()

    def preview_for(self, arguments: JsonObject) -> ToolPreview:
        return ToolPreview(
            title=self.title(arguments),
            kind=self.kind,
            permission_scope=self.name,
            scope_label=self.name,
        )

    async def preview(self, arguments: JsonObject, ctx: ToolContext) -> ToolPreview:
        self.previews += 1
        missing = [k for k in self.required if k not in arguments]
        if missing:
            raise ToolError(f"missing {', '.join(missing)}")
        return self.preview_for(arguments)

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolOutcome:
        self.executions.append(Execution(dict(arguments), ctx.effect_key))
        if ctx.report is not None:
            await ctx.report((TextContent(f"running {self.name}"),))
        if self.hold is not None:
            await self.hold.wait()
        if self.fail_with is not None:
            raise self.fail_with
        done = f"{self.name} done: {arguments}"
        return ToolOutcome(
            ok=True,
            for_model=done,
            content=(TextContent(done),),
            raw_output={"n": len(self.executions)},
        )


class IssueRefund(FakeTool):
    """The seed's help-desk tool."""

    def __init__(self, **kw: Any) -> None:
        super().__init__("issue_refund", required=("order_id",), **kw)

    def title(self, arguments: JsonObject) -> str:
        return f"Refund order {arguments.get('order_id')}"


class ReadFile(FakeTool):
    def __init__(self) -> None:
        super().__init__("read_file", kind=ToolKind.READ, side_effect=False, required=("path",))

    def preview_for(self, arguments: JsonObject) -> ToolPreview:
        path = str(WORKSPACE / str(arguments["path"]))
        return ToolPreview(
            title=f"Read {arguments['path']}",
            kind=ToolKind.READ,
            locations=(Location(path),),
            permission_scope=self.name,
            scope_label=self.name,
        )


class WriteFile(FakeTool):
    def __init__(self) -> None:
        super().__init__("write_file", kind=ToolKind.EDIT, required=("path", "content"))

    def preview_for(self, arguments: JsonObject) -> ToolPreview:
        raw = str(arguments["path"])
        inside = not raw.startswith("/")
        path = str(WORKSPACE / raw) if inside else raw
        return ToolPreview(
            title=f"Write {raw}",
            kind=ToolKind.EDIT,
            locations=(Location(path),),
            content=(DiffContent(path, str(arguments["content"]), None),),
            permission_scope=self.name,
            scope_label=self.name,
            inside_workspace=inside,
        )


class RunCommand(FakeTool):
    def __init__(self) -> None:
        super().__init__("run_command", kind=ToolKind.EXECUTE, required=("command",))

    def preview_for(self, arguments: JsonObject) -> ToolPreview:
        command = str(arguments["command"])
        prefix = " ".join(command.split()[:2])
        return ToolPreview(
            title=f"Run `{command}`",
            kind=ToolKind.EXECUTE,
            permission_scope=prefix,
            scope_label=prefix,
        )


# -- the editor side -------------------------------------------------------------------------


@dataclass
class PromptSeen:
    call: ToolCallShown
    options: tuple[PermissionOption, ...]


class RecordingSink:
    """Records every update and prompt in order; answers prompts from a script.

    An answer is an option id, None (the editor answers cancelled), or a `Hold` (the prompt
    stays pending until released, then answers allow-once). With no script left: allow-once.
    """

    def __init__(self, answers: Sequence[str | Hold | None] = ()) -> None:
        self.answers = list(answers)
        self.timeline: list[TurnUpdate | PromptSeen] = []
        self.closed = False
        self.after_close: list[TurnUpdate | PromptSeen] = []

    @property
    def updates(self) -> list[TurnUpdate]:
        return [u for u in self.timeline if not isinstance(u, PromptSeen)]

    @property
    def prompts(self) -> list[PromptSeen]:
        return [u for u in self.timeline if isinstance(u, PromptSeen)]

    def _record(self, item: TurnUpdate | PromptSeen) -> None:
        if self.closed:
            self.after_close.append(item)
        self.timeline.append(item)

    async def send_update(self, update: TurnUpdate) -> None:
        await anyio.lowlevel.checkpoint()
        self._record(update)

    async def request_permission(
        self, call: ToolCallShown, options: Sequence[PermissionOption]
    ) -> PermissionDecision:
        self._record(PromptSeen(call, tuple(options)))
        answer = self.answers.pop(0) if self.answers else "allow-once"
        if isinstance(answer, Hold):
            await answer.wait()
            answer = "allow-once"
        await anyio.lowlevel.checkpoint()
        return PermissionDecision(answer)

    def resets(self) -> list[ResetMarker]:
        return [u.reset for u in self.updates if isinstance(u, AgentText) and u.reset]


@dataclass
class EditorView:
    """What an editor shows: message, thought and tool-call items in order."""

    items: list[list[Any]] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(item[2] for item in self.items if item[0] == "text")

    @property
    def messages(self) -> list[str]:
        return [item[2] for item in self.items if item[0] == "text"]

    @property
    def thoughts(self) -> str:
        return "".join(item[2] for item in self.items if item[0] == "thought")

    @property
    def tools(self) -> dict[str, str]:
        return {item[1]: item[3] for item in self.items if item[0] == "tool"}


def reduce_updates(
    updates: Sequence[TurnUpdate | PromptSeen], *, honour_reset: bool = True
) -> EditorView:
    """A tiny editor: chunks with the same message id join; a reset discards the message and
    thought chunks since the last tool_call / tool_call_update (spec/reset-extension.md)."""
    view = EditorView()
    boundary = 0
    for update in updates:
        if isinstance(update, AgentText | AgentThought):
            kind = "text" if isinstance(update, AgentText) else "thought"
            if isinstance(update, AgentText) and update.reset and honour_reset:
                del view.items[boundary:]
            last = view.items[-1] if view.items else None
            if last is not None and last[0] == kind and last[1] == update.message_id:
                last[2] += update.text
            elif update.text:
                view.items.append([kind, update.message_id, update.text])
        elif isinstance(update, ToolCallShown):
            view.items.append(["tool", update.tool_call_id, update.title, update.status.value])
            boundary = len(view.items)
        elif isinstance(update, ToolCallChanged):
            for item in view.items:
                if item[0] == "tool" and item[1] == update.tool_call_id and update.status:
                    item[3] = update.status.value
            boundary = len(view.items)
    return view


# -- requests --------------------------------------------------------------------------------


class RecordingSleep:
    """The back-off seam: records each delay and returns at once (or holds)."""

    def __init__(self, hold: Hold | None = None) -> None:
        self.delays: list[float] = []
        self.hold = hold

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        if self.hold is not None:
            await self.hold.wait()
        await anyio.lowlevel.checkpoint()


def make_request(
    provider: FakeProvider,
    sink: RecordingSink,
    tools: Sequence[FakeTool] = (),
    *,
    turn_id: str = "s1-turn1",
    history: list[Message] | None = None,
    ledger: EffectLedger | None = None,
    memory: PermissionMemory | None = None,
    mode: SessionMode = SessionMode.ASK,
    policy: RetryPolicy | None = None,
    sleep: Callable[[float], Awaitable[None]] | None = None,
    prompt: str = "Please help",
    max_model_calls: int = 32,
) -> TurnRequest:
    return TurnRequest(
        turn_id=turn_id,
        session_id="s1",
        history=[] if history is None else history,
        prompt=UserTurn((prompt,)),
        provider=provider,
        model="fake-model",
        tools={t.name: t for t in tools},
        make_context=lambda: ToolContext(session_id="s1", cwd=WORKSPACE, roots=(WORKSPACE,)),
        sink=sink,
        ledger=EffectLedger.in_memory() if ledger is None else ledger,
        permissions=PermissionMemory() if memory is None else memory,
        mode=mode,
        policy=RetryPolicy() if policy is None else policy,
        sleep=RecordingSleep() if sleep is None else sleep,
        random=lambda: 0.5,
        max_model_calls=max_model_calls,
    )


async def cancel_when(request: TurnRequest, hold: Hold) -> Turn:
    """Run the turn and cancel its scope once `hold` is reached (bounded); the turn."""
    turn = Turn(request)
    scope = anyio.CancelScope()

    async def drive() -> None:
        with scope:
            await turn.run()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(drive)
            await hold.reached.wait()
            scope.cancel()
    assert scope.cancelled_caught  # the caller now answers stopReason "cancelled"
    return turn
