"""A raw ACP editor driving a real `python -m acp_bridge` process over its stdio pipes.

No project client code runs on this side: messages are plain JSON lines, so the test sees
exactly what the bridge writes. Every line the bridge writes is checked against the official
ACP v1 schema (`AgentWireValidator(strict_roots=True)`), every line sent is noted for it.
The editor advertises no `fs` and no `terminal`, so the bridge's tools act on the local disk
in the session's cwd. Permission requests are answered `allow_once` and recorded.

    async with spawned_bridge(argv, env=env, stderr=log) as process:
        editor = StdioEditor(process, on_chunk=...)
        await editor.initialize()
        session_id = await editor.new_session(workspace)
        result = await editor.prompt(session_id, "write the notes")

`reset_aware_messages(updates)` is a tiny editor-side reducer (spec/reset-extension.md §5,
agent text only): what a reset-aware editor shows, one entry per model call's message.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.abc
from acp_schema import AgentWireValidator

__all__ = [
    "NO_CLIENT_CAPABILITIES",
    "StdioEditor",
    "reset_aware_messages",
    "spawned_bridge",
]

# The editor offers no fs/* and no terminal/*: the bridge falls back to the local disk.
NO_CLIENT_CAPABILITIES: dict[str, Any] = {
    "fs": {"readTextFile": False, "writeTextFile": False},
    "terminal": False,
}


@contextlib.asynccontextmanager
async def spawned_bridge(
    argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, stderr: IO[bytes]
) -> AsyncIterator[anyio.abc.Process]:
    """The process with stdin/stdout pipes; killed on the way out if it is still running."""
    process = await anyio.open_process(list(argv), env=dict(env), cwd=cwd, stderr=stderr)
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.CancelScope(shield=True):
            await process.wait()
            await process.aclose()


class StdioEditor:
    """Sends requests, reads every line the bridge writes, answers what the bridge asks.

    `received` keeps every decoded agent message in order; `updates` the `update` of each
    `session/update`; `permission_requests` the params of each `session/request_permission`.
    `on_update` is called with each update as soon as its line is read.
    """

    def __init__(
        self,
        process: anyio.abc.Process,
        *,
        on_update: Callable[[Mapping[str, Any]], None] | None = None,
    ) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._on_update = on_update
        self.validator = AgentWireValidator(strict_roots=True)
        self.received: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []
        self.updates: list[dict[str, Any]] = []
        self.permission_requests: list[dict[str, Any]] = []
        self._buffer = b""
        self._next_id = 0

    async def initialize(self) -> dict[str, Any]:
        return await self.call(
            "initialize", {"protocolVersion": 1, "clientCapabilities": NO_CLIENT_CAPABILITIES}
        )

    async def new_session(self, cwd: Path) -> str:
        result = await self.call("session/new", {"cwd": str(cwd), "mcpServers": []})
        session_id: str = result["sessionId"]
        return session_id

    async def prompt(self, session_id: str, text: str) -> dict[str, Any]:
        prompt = [{"type": "text", "text": text}]
        return await self.call("session/prompt", {"sessionId": session_id, "prompt": prompt})

    async def call(self, method: str, params: Any) -> dict[str, Any]:
        """Sends a request and reads until its response; returns the result (errors fail)."""
        self._next_id += 1
        request_id = self._next_id
        await self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            message = await self._receive()
            if "method" in message:
                await self._handle(message)
            elif message.get("id") == request_id:
                assert "error" not in message, f"{method} failed: {message['error']}"
                result: dict[str, Any] = message["result"]
                return result

    async def close(self) -> list[dict[str, Any]]:
        """Ends stdin as an editor does on exit; returns what the bridge wrote after that."""
        await self._stdin.aclose()
        tail: list[dict[str, Any]] = []
        while (message := await self._receive_or_eof()) is not None:
            tail.append(message)
        return tail

    async def _handle(self, message: dict[str, Any]) -> None:
        method = message["method"]
        if method == "session/update":
            update = message["params"]["update"]
            self.updates.append(update)
            if self._on_update is not None:
                self._on_update(update)
        elif method == "session/request_permission":
            params = message["params"]
            self.permission_requests.append(params)
            chosen = next(o for o in params["options"] if o["kind"] == "allow_once")
            outcome = {"outcome": "selected", "optionId": chosen["optionId"]}
            await self._send(
                {"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": outcome}}
            )
        elif "id" in message:
            # Nothing else was advertised (no fs, no terminal): the bridge must not ask.
            raise AssertionError(f"unexpected request from the bridge: {message}")

    async def _send(self, message: dict[str, Any]) -> None:
        self.validator.note_client_message(message)
        self.sent.append(message)
        await self._stdin.send(json.dumps(message).encode() + b"\n")

    async def _receive(self) -> dict[str, Any]:
        message = await self._receive_or_eof()
        assert message is not None, "the bridge closed stdout in the middle of a request"
        return message

    async def _receive_or_eof(self) -> dict[str, Any] | None:
        while b"\n" not in self._buffer:
            try:
                self._buffer += await self._stdout.receive()
            except anyio.EndOfStream:
                assert not self._buffer, f"a last line without newline: {self._buffer!r}"
                return None
        line, self._buffer = self._buffer.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        self.validator.check(message)
        self.received.append(message)
        return message


def reset_aware_messages(updates: Iterable[Mapping[str, Any]]) -> list[str]:
    """The agent messages a reset-aware editor shows (RESET-005), one per model call.

    A tool call or tool call update closes the current model call's message; a chunk with
    `_meta.reset` discards that model call's text so far, then appends its own text.
    """
    messages: list[str] = []
    current: list[str] = []
    for update in updates:
        kind = update.get("sessionUpdate")
        if kind in ("tool_call", "tool_call_update"):
            if "".join(current):
                messages.append("".join(current))
            current = []
        elif kind == "agent_message_chunk":
            meta = update.get("_meta")
            if isinstance(meta, Mapping) and meta.get("reset") is True:
                current = []
            current.append(update["content"]["text"])
    if "".join(current):
        messages.append("".join(current))
    return messages
