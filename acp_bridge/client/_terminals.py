"""The editor's `terminal/*` methods: real subprocesses, run in the session's directories.

`terminal/create` starts the command (no shell: `command` and `args` as given) and returns at
once; a task collects its output (stdout and stderr together), keeping at most
`outputByteLimit` bytes by dropping from the start on a character boundary (ACP terminals).
`terminal/kill` stops the command and keeps the terminal; `terminal/release` stops it and
forgets the id. Every command still running when the client closes is killed.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process, TaskGroup

from acp_bridge._json import JsonObject, JsonValue
from acp_bridge.client._fs import confine
from acp_bridge.errors import InvalidParams

__all__ = ["TerminalHost"]


def _trim(output: bytearray, limit: int | None) -> bool:
    """Drops bytes from the start so at most `limit` remain, on a UTF-8 boundary."""
    if limit is None or len(output) <= limit:
        return False
    cut = len(output) - limit
    while cut < len(output) and output[cut] & 0xC0 == 0x80:  # a continuation byte
        cut += 1
    del output[:cut]
    return True


@dataclass(slots=True)
class _Terminal:
    process: Process
    limit: int | None
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    exited: anyio.Event = field(default_factory=anyio.Event)

    def exit_status(self) -> JsonObject:
        code = self.process.returncode
        if code is not None and code < 0:
            try:
                name: JsonValue = signal.Signals(-code).name
            except ValueError:
                name = str(-code)
            return {"exitCode": None, "signal": name}
        return {"exitCode": code, "signal": None}


class TerminalHost:
    """The terminals of one client connection, their readers running in `task_group`."""

    def __init__(self, task_group: TaskGroup) -> None:
        self._tg = task_group
        self._terminals: dict[str, _Terminal] = {}
        self._ids = itertools.count(1)

    def _get(self, params: Mapping[str, Any]) -> _Terminal:
        terminal = self._terminals.get(str(params.get("terminalId")))
        if terminal is None:
            raise InvalidParams("unknown or released terminal", {"field": "terminalId"})
        return terminal

    async def create(self, params: Mapping[str, Any], roots: Sequence[Path]) -> JsonObject:
        command = params.get("command")
        if not isinstance(command, str) or not command:
            raise InvalidParams("command must be a non-empty string", {"field": "command"})
        cwd = confine(params.get("cwd") or str(roots[0]), roots, "cwd")
        env = dict(os.environ)
        env.update({str(v["name"]): str(v["value"]) for v in params.get("env") or ()})
        limit = params.get("outputByteLimit")
        try:
            process = await anyio.open_process(
                [command, *(str(a) for a in params.get("args") or ())],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
        except OSError as exc:
            raise InvalidParams(f"cannot run {command}: {exc.strerror or exc}") from None
        terminal_id = f"term-{next(self._ids)}"
        terminal = _Terminal(process, int(limit) if limit is not None else None)
        self._terminals[terminal_id] = terminal
        self._tg.start_soon(self._collect, terminal)
        return {"terminalId": terminal_id}

    async def _collect(self, terminal: _Terminal) -> None:
        stream = terminal.process.stdout
        try:
            if stream is not None:
                async for chunk in stream:
                    terminal.output.extend(chunk)
                    terminal.truncated |= _trim(terminal.output, terminal.limit)
            await terminal.process.wait()
        finally:
            terminal.exited.set()

    async def output(self, params: Mapping[str, Any]) -> JsonObject:
        terminal = self._get(params)
        reply: JsonObject = {
            "output": terminal.output.decode("utf-8", errors="replace"),
            "truncated": terminal.truncated,
        }
        if terminal.exited.is_set():
            reply["exitStatus"] = terminal.exit_status()
        return reply

    async def wait_for_exit(self, params: Mapping[str, Any]) -> JsonObject:
        terminal = self._get(params)
        await terminal.exited.wait()
        return terminal.exit_status()

    async def kill(self, params: Mapping[str, Any]) -> JsonObject:
        self._stop(self._get(params))
        return {}

    async def release(self, params: Mapping[str, Any]) -> JsonObject:
        terminal = self._get(params)
        self._stop(terminal)
        del self._terminals[str(params.get("terminalId"))]
        return {}

    @staticmethod
    def _stop(terminal: _Terminal) -> None:
        if not terminal.exited.is_set() and terminal.process.returncode is None:
            terminal.process.kill()

    def close(self) -> None:
        """Kills every command still running (the connection is ending)."""
        for terminal in self._terminals.values():
            self._stop(terminal)
        self._terminals.clear()
