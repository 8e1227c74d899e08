"""A scripted editor for interaction tests: a real ACP client over raw NDJSON.

It answers the agent's requests like an editor would (permission prompts from a policy,
`fs/*` on the real disk, `terminal/*` by running the command locally), records every
message, and validates every line the agent writes against the official ACP v1 schema.
It does not use the project's JSON-RPC code, so it sees exactly what is on the wire.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import TaskGroup

from acp_bridge.wire import MemoryTransport

WAIT = 10.0

PermissionPolicy = Callable[[dict[str, Any]], dict[str, Any]]


def choose(kind: str) -> PermissionPolicy:
    """A policy that picks the first option of `kind` (allow_once, reject_always, ...)."""

    def policy(params: dict[str, Any]) -> dict[str, Any]:
        for option in params["options"]:
            if option["kind"] == kind:
                return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}
        raise AssertionError(f"no {kind} option in {params['options']}")

    return policy


def cancelled(params: dict[str, Any]) -> dict[str, Any]:
    return {"outcome": {"outcome": "cancelled"}}


@dataclass
class _Terminal:
    output: str
    exit_code: int


@dataclass
class ScriptedEditor:
    """One editor connection. Use `async with connect(transport) as editor`."""

    transport: MemoryTransport
    fs: bool = True
    terminal: bool = True
    permission: PermissionPolicy = field(default_factory=lambda: choose("allow_once"))
    validator: Any = None
    wait: float = WAIT  # how long a request may take (longer where MCP servers must connect)
    received: list[dict[str, Any]] = field(default_factory=list)
    agent_requests: list[dict[str, Any]] = field(default_factory=list)
    _buffer: bytes = b""
    _next_id: int = 0
    _waiting: dict[Any, anyio.Event] = field(default_factory=dict)
    _answers: dict[Any, dict[str, Any]] = field(default_factory=dict)
    _terminals: dict[str, _Terminal] = field(default_factory=dict)
    _hold_permission: anyio.Event | None = None
    permission_asked: anyio.Event = field(default_factory=anyio.Event)

    # -- sending -------------------------------------------------------------------------

    async def send(self, message: dict[str, Any]) -> None:
        if self.validator is not None:
            self.validator.note_client_message(message)
        await self.transport.send(json.dumps(message).encode() + b"\n")

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Sends a request and waits for the whole response message."""
        self._next_id += 1
        request_id = self._next_id
        done = self._waiting[request_id] = anyio.Event()
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        with anyio.fail_after(self.wait):
            await done.wait()
        return self._answers.pop(request_id)

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Like `request`, but returns the result and fails on an error response."""
        reply = await self.request(method, params)
        assert "result" in reply, f"{method} failed: {reply}"
        result: dict[str, Any] = reply["result"]
        return result

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    # -- the ACP client side -------------------------------------------------------------

    async def initialize(self) -> dict[str, Any]:
        return await self.call(
            "initialize",
            {
                "protocolVersion": 1,
                "clientCapabilities": {
                    "fs": {"readTextFile": self.fs, "writeTextFile": self.fs},
                    "terminal": self.terminal,
                },
                "clientInfo": {"name": "scripted-editor", "version": "0"},
            },
        )

    async def new_session(self, cwd: Path | str) -> str:
        result = await self.call("session/new", {"cwd": str(cwd), "mcpServers": []})
        session_id: str = result["sessionId"]
        return session_id

    async def prompt(self, session_id: str, text: str) -> dict[str, Any]:
        return await self.request(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]},
        )

    def updates(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """Every `session/update` payload received (for one session when given)."""
        return [
            m["params"]["update"]
            for m in self.received
            if m.get("method") == "session/update"
            and (session_id is None or m["params"]["sessionId"] == session_id)
        ]

    def requests_of(self, method: str) -> list[dict[str, Any]]:
        return [r for r in self.agent_requests if r["method"] == method]

    def hold_permissions(self) -> anyio.Event:
        """Leaves permission prompts unanswered until the returned event is set."""
        self._hold_permission = anyio.Event()
        return self._hold_permission

    # -- receiving -----------------------------------------------------------------------

    async def _read_loop(self, tg: TaskGroup) -> None:
        while True:
            try:
                chunk = await self.transport.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                return
            self._buffer += chunk
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                message: dict[str, Any] = json.loads(line)
                if self.validator is not None:
                    self.validator.check(message)
                self.received.append(message)
                if "method" in message and "id" in message:
                    self.agent_requests.append(message)
                    tg.start_soon(self._answer, message)
                elif "method" not in message:
                    request_id = message.get("id")
                    if request_id in self._waiting:
                        self._answers[request_id] = message
                        self._waiting.pop(request_id).set()

    async def _answer(self, request: dict[str, Any]) -> None:
        method, params = request["method"], request["params"]
        try:
            result = await self._handle(method, params)
        except _EditorError as exc:
            await self.send(
                {
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "error": {"code": exc.code, "message": str(exc)},
                }
            )
            return
        await self.send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    async def _handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "session/request_permission":
            self.permission_asked.set()
            if self._hold_permission is not None:
                await self._hold_permission.wait()
                return cancelled(params)
            return self.permission(params)
        if method == "fs/read_text_file" and self.fs:
            return {"content": _read_range(params)}
        if method == "fs/write_text_file" and self.fs:
            _write_file(params)
            return {}
        if method == "terminal/create" and self.terminal:
            done = subprocess.run(  # noqa: ASYNC221 - a test editor; commands are tiny
                [params["command"], *params.get("args", [])],
                cwd=params.get("cwd"),
                capture_output=True,
                text=True,
                env={**os.environ, **{e["name"]: e["value"] for e in params.get("env", [])}},
                check=False,
            )
            terminal_id = f"term-{len(self._terminals) + 1}"
            self._terminals[terminal_id] = _Terminal(done.stdout + done.stderr, done.returncode)
            return {"terminalId": terminal_id}
        if method == "terminal/wait_for_exit" and self.terminal:
            return {"exitCode": self._terminals[params["terminalId"]].exit_code}
        if method == "terminal/output" and self.terminal:
            term = self._terminals[params["terminalId"]]
            return {
                "output": term.output,
                "truncated": False,
                "exitStatus": {"exitCode": term.exit_code},
            }
        if method in ("terminal/kill", "terminal/release") and self.terminal:
            return {}
        raise _EditorError(-32601, f"Method not found: {method}")


class _EditorError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@contextlib.asynccontextmanager
async def connect(transport: MemoryTransport, **options: Any) -> AsyncIterator[ScriptedEditor]:
    editor = ScriptedEditor(transport, **options)
    async with anyio.create_task_group() as tg:
        tg.start_soon(editor._read_loop, tg)
        try:
            yield editor
        finally:
            tg.cancel_scope.cancel()


def _read_range(params: dict[str, Any]) -> str:
    """What `fs/read_text_file` answers: the file's lines from `line` (1-based), `limit` of them."""
    path = Path(params["path"])
    if not path.exists():
        raise _EditorError(-32002, f"Resource not found: {path}")
    lines = path.read_text().splitlines(keepends=True)
    start = (params.get("line") or 1) - 1
    limit = params.get("limit")
    return "".join(lines[start : start + limit if limit is not None else None])


def _write_file(params: dict[str, Any]) -> None:
    """What `fs/write_text_file` does: the file written, its directory made when missing."""
    path = Path(params["path"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(params["content"])
