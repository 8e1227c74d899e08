"""Helpers for the session tests: an in-process bridge that can be stopped and started again.

`serving(config)` runs the real `Agent` over a memory pair, exactly as `agent.serve` wires
it (a JSON-RPC peer, the effect ledger in the state dir), and calls `Agent.close()` when it
stops, as the composition root does at the end of a connection. Every message the agent
writes is validated against the official ACP v1 schema by the scripted editor.

`shown(editor, session_id, prompts)` is what that editor showed for the session, reduced by
the reference reducer; `view_of(updates)` reduces bare updates (a replay).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from bridge import schema_validator
from editor import ScriptedEditor, connect
from rawpeer import MemoryLink

from acp_bridge.agent import Agent, AgentConfig
from acp_bridge.client import (
    EditorEvent,
    EditorView,
    MessageEntry,
    PromptSent,
    RetryNotice,
    ToolCallEntry,
    reduce,
)
from acp_bridge.jsonrpc import JsonRpcPeer
from acp_bridge.sessions import SessionStore
from acp_bridge.turn import EffectLedger

__all__ = [
    "EditorLog",
    "comparable",
    "editor_events",
    "load",
    "serving",
    "settle",
    "view_of",
]


@dataclass
class EditorLog:
    """The editor's side of a session: the prompts it sent, where in the wire order."""

    editor: ScriptedEditor
    prompts: list[tuple[int, str]] = field(default_factory=list)

    async def prompt(self, session_id: str, text: str) -> dict[str, Any]:
        self.prompts.append((len(self.editor.received), text))
        return await self.editor.prompt(session_id, text)

    def events(self, session_id: str, since: int = 0) -> list[EditorEvent]:
        """What the editor observed for the session from message `since` on."""
        return editor_events(self.editor.received, self.prompts, session_id, since)

    def view(self, session_id: str, since: int = 0) -> EditorView:
        return reduce(self.events(session_id, since))


def editor_events(
    received: list[dict[str, Any]],
    prompts: list[tuple[int, str]],
    session_id: str,
    since: int = 0,
) -> list[EditorEvent]:
    """The reducer's input: each prompt (sent when `received` held `position` messages)
    and every `session/update` of the session, in wire order."""
    sent = dict(prompts)
    events: list[EditorEvent] = []
    for index, message in enumerate(received):
        if index < since:
            continue
        if index in sent:
            events.append(PromptSent(sent.pop(index)))
        if message.get("method") == "session/update" and (
            message["params"]["sessionId"] == session_id
        ):
            events.append(message["params"])
    events.extend(PromptSent(text) for position, text in sent.items() if position >= since)
    return events


def view_of(updates: Iterable[Mapping[str, Any]]) -> EditorView:
    return reduce(list(updates))


def comparable(view: EditorView) -> list[tuple[Any, ...]]:
    """The view's conversation entries as plain tuples: messages with their role and text
    (and message id for the agent's), tool calls with every field. Retry notices are the
    editor's transient "retrying..." marks, not conversation, and are left out."""
    out: list[tuple[Any, ...]] = []
    for entry in view.entries:
        if isinstance(entry, RetryNotice):
            continue
        if isinstance(entry, MessageEntry):
            ident = None if entry.role == "user" else entry.message_id
            out.append(("message", entry.role, ident, entry.text))
        elif isinstance(entry, ToolCallEntry):
            out.append(
                (
                    "tool_call",
                    entry.tool_call_id,
                    entry.title,
                    entry.kind,
                    entry.status,
                    entry.content,
                    entry.locations,
                    entry.raw_input,
                    entry.raw_output,
                )
            )
        else:
            out.append(("other", entry))
    return out


@contextlib.asynccontextmanager
async def serving(
    config: AgentConfig,
    *,
    store: SessionStore | None = None,
    **editor_options: Any,
) -> AsyncIterator[ScriptedEditor]:
    """The agent on one end of a memory pair, a scripted editor on the other; the agent is
    closed (its sessions released) when the block ends, as at the end of a connection."""
    ledger = EffectLedger(config.state_dir)
    async with MemoryLink() as link, anyio.create_task_group() as tg:
        peer = JsonRpcPeer(link.agent_side)
        agent = Agent(config, peer, ledger, store)
        tg.start_soon(peer.serve, agent)
        try:
            async with connect(
                link.client_side, validator=schema_validator(), **editor_options
            ) as editor:
                yield editor
        finally:
            tg.cancel_scope.cancel()
            agent.close()
            ledger.close()


async def load(
    editor: ScriptedEditor, session_id: str, cwd: Path | str, **extra: Any
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """session/load: the response and the updates received before it."""
    before = len(editor.received)
    reply = await editor.request(
        "session/load", {"sessionId": session_id, "cwd": str(cwd), "mcpServers": [], **extra}
    )
    position = next(i for i, m in enumerate(editor.received) if m is reply)
    replayed = [
        m["params"]["update"]
        for m in editor.received[before:position]
        if m.get("method") == "session/update" and m["params"]["sessionId"] == session_id
    ]
    return reply, replayed


async def settle() -> None:
    """Returns once every task of the in-process bridge and editor waits for input, so
    anything the bridge sends after a response (the commands) has arrived."""
    with anyio.fail_after(10):
        await anyio.wait_all_tasks_blocked()
