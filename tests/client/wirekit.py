"""Helpers for the client tests: `session/update` builders, and the bridge run in-process.

Imported as ``from client.wirekit import ...`` (``tests/`` is on sys.path).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio
from bridge import schema_validator, scripted_config
from rawpeer import MemoryLink

from acp_bridge.agent import AgentConfig, serve
from acp_bridge.client import AcpClient, PermissionPolicy, WireMessage, allow_once, connect

SESSION = "sess_test"
WAIT = 20.0


def chunk(
    text: str,
    message_id: str | None = "m1-a1",
    *,
    meta: dict[str, Any] | None = None,
    kind: str = "agent_message_chunk",
) -> dict[str, Any]:
    """`session/update` params of a message, thought or user chunk."""
    update: dict[str, Any] = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    if message_id is not None:
        update["messageId"] = message_id
    if meta is not None:
        update["_meta"] = meta
    return {"sessionId": SESSION, "update": update}


def thought(text: str, message_id: str = "m1-a1-thought") -> dict[str, Any]:
    return chunk(text, message_id, kind="agent_thought_chunk")


def marker(
    attempt: int, message_id: str, reason: str = "stream_interrupted", text: str = ""
) -> dict[str, Any]:
    """The reset chunk opening attempt `attempt` (RESET-001)."""
    return chunk(text, message_id, meta={"reset": True, "attempt": attempt, "reason": reason})


def tool_call(tool_call_id: str, title: str = "Write a.txt", **fields: Any) -> dict[str, Any]:
    update = {
        "sessionUpdate": "tool_call",
        "toolCallId": tool_call_id,
        "title": title,
        "kind": "edit",
        "status": "pending",
        **fields,
    }
    return {"sessionId": SESSION, "update": update}


def tool_update(tool_call_id: str, **fields: Any) -> dict[str, Any]:
    update = {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, **fields}
    return {"sessionId": SESSION, "update": update}


def validate_transcript(transcript: Sequence[WireMessage]) -> int:
    """Every message the bridge wrote, checked against the official ACP v1 schema, in order.
    Returns how many were checked."""
    validator = schema_validator()
    checked = 0
    for item in transcript:
        if item.direction == "sent":
            validator.note_client_message(item.message)
        else:
            validator.check(item.message)
            checked += 1
    return checked


@contextlib.asynccontextmanager
async def bridge_in_process(
    state_dir: Path, *, policy: PermissionPolicy = allow_once, config: AgentConfig | None = None
) -> AsyncIterator[AcpClient]:
    """The real agent (`acp_bridge.agent.serve`, scripted provider) and the reference client
    over a memory pair. On exit every message the bridge wrote is schema-validated."""
    async with MemoryLink() as link, anyio.create_task_group() as tg:
        tg.start_soon(serve, link.agent_side, config or scripted_config(state_dir))
        with anyio.fail_after(WAIT):
            async with connect(link.client_side, policy=policy) as client:
                await client.initialize()
                yield client
        assert validate_transcript(client.transcript) > 0
        tg.cancel_scope.cancel()


def workspace(root: Path, name: str = "ws") -> Path:
    """A scratch workspace with the README.md the tool-loop script reads."""
    folder = root / name
    folder.mkdir()
    (folder / "README.md").write_text("# My project\n\nA test workspace.\n")
    return folder
