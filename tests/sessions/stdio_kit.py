"""A minimal editor for real `python -m acp_bridge` processes, which tests may kill -9.

`StdioEditor` speaks raw NDJSON to the child (no project JSON-RPC code), validates every line
the bridge writes against the official ACP v1 schema, and answers the bridge's permission
requests: "allow once", except a question about an effect whose outcome is unknown, which it
answers with the option the test chose (default "Do not run it"). It advertises neither `fs`
nor `terminal`, so the bridge reads, writes and runs commands itself: its effects happen in
the bridge process and die with it. Every wait is bounded (`LineProcess`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from acp_schema import AgentWireValidator
from subprocess_util import LineProcess, bridge_argv, isolated_env

__all__ = [
    "APPEND",
    "Killed",
    "StdioEditor",
    "append_script",
    "file_lines",
    "is_update",
    "write_script",
]

APPEND = "echo x >> effects.log"  # one effect, counted as a line of the workspace's effects.log


class Killed(Exception):
    """The test killed the bridge at the chosen message (see `StdioEditor.kill_after`)."""


def write_script(path: Path, name: str, calls: list[Any]) -> Path:
    path.write_text(
        json.dumps({"name": name, "description": f"test script {name}", "calls": calls})
    )
    return path


def append_script(path: Path, command: str = APPEND, *, then_block: bool) -> Path:
    """Call 1 runs `command`; call 2 says it is done, after a very long pause if asked."""
    done: dict[str, Any] = (
        {"text": "Done.", "delay_ms": 60_000} if then_block else {"text": "Done."}
    )
    return write_script(
        path,
        "append-line",
        [
            {
                "attempts": [
                    [
                        {"text": "Appending a line. "},
                        {"tool_call": "run_command", "arguments": {"command": command}},
                        {"finish": "auto"},
                    ]
                ]
            },
            {"attempts": [[{"text": "Appended. "}, done, {"finish": "stop"}]]},
        ],
    )


def file_lines(path: Path) -> list[str]:
    """The lines of a file, none when it does not exist (the effects a run left)."""
    return path.read_text().splitlines() if path.exists() else []


def is_update(kind: str, **fields: Any) -> Callable[[dict[str, Any]], bool]:
    """Whether a message is a `session/update` of `kind` with these field values."""

    def match(message: dict[str, Any]) -> bool:
        if message.get("method") != "session/update":
            return False
        update = message["params"]["update"]
        return update["sessionUpdate"] == kind and all(
            update.get(k) == v for k, v in fields.items()
        )

    return match


class StdioEditor:
    """One bridge process and the editor side of its connection."""

    def __init__(
        self,
        state_dir: Path,
        home: Path,
        *extra_args: str,
        rerun_unknown: bool = False,
        env: dict[str, str] | None = None,
    ) -> None:
        argv = bridge_argv("--state-dir", str(state_dir), *extra_args)
        self.process = LineProcess(argv, env=isolated_env(home, env))
        self.validator = AgentWireValidator(strict_roots=True)
        self.received: list[dict[str, Any]] = []
        self.rerun_unknown = rerun_unknown
        self.kill_after: int | None = None  # kill -9 once this many messages were received
        self.prompts: list[tuple[int, str]] = []  # (messages received when sent, text)
        self._next_id = 0

    def __enter__(self) -> StdioEditor:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.process.kill()

    @property
    def pid(self) -> int:
        return self.process.process.pid

    def kill(self) -> None:
        """SIGKILL, and reaped: nothing of the bridge runs any more."""
        self.process.kill()

    def stop(self) -> int:
        """Ends the connection as an editor does (end of input); the bridge exits."""
        self.process.close_stdin()
        return self.process.wait_exit()

    # -- sending ---------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        self.validator.note_client_message(message)
        self.process.send(message)

    def request(self, method: str, params: dict[str, Any]) -> int:
        self._next_id += 1
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return self._next_id

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """A request and its whole response message (raises `Killed` at the kill point)."""
        return self.response(self.request(method, params))

    # -- receiving -------------------------------------------------------------------------

    def response(self, request_id: int) -> dict[str, Any]:
        while True:
            message = self.next_message()
            if "method" not in message and message.get("id") == request_id:
                return message

    def next_message(self) -> dict[str, Any]:
        if self.kill_after is not None and len(self.received) >= self.kill_after:
            self.kill()
            raise Killed()
        message: dict[str, Any] = self.process.read_message()
        self.validator.check(message)
        self.received.append(message)
        if message.get("method") == "session/request_permission" and "id" in message:
            self.send(
                {"jsonrpc": "2.0", "id": message["id"], "result": self._answer(message["params"])}
            )
        return message

    def read_until(self, found: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """Reads messages (each bounded) until one is `found`; returns it."""
        while not found(message := self.next_message()):
            pass
        return message

    def _answer(self, params: dict[str, Any]) -> dict[str, Any]:
        unknown = "outcome is unknown" in params["toolCall"].get("title", "")
        kinds = ["allow_once"] if not unknown or self.rerun_unknown else ["reject_once"]
        for option in params["options"]:
            if option["kind"] in kinds:
                return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}
        raise AssertionError(f"no {kinds} option in {params['options']}")

    def updates(self, session_id: str, since: int = 0) -> list[dict[str, Any]]:
        return [
            m["params"]["update"]
            for m in self.received[since:]
            if m.get("method") == "session/update" and m["params"]["sessionId"] == session_id
        ]

    def permission_titles(self, since: int = 0) -> list[str]:
        return [
            m["params"]["toolCall"].get("title", "")
            for m in self.received[since:]
            if m.get("method") == "session/request_permission"
        ]

    # -- the ACP steps ---------------------------------------------------------------------

    def initialize(self) -> dict[str, Any]:
        reply = self.call(
            "initialize",
            {
                "protocolVersion": 1,
                "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}},
                "clientInfo": {"name": "stdio-test-editor", "version": "0"},
            },
        )
        result: dict[str, Any] = reply["result"]
        return result

    def new_session(self, cwd: Path) -> str:
        reply = self.call("session/new", {"cwd": str(cwd), "mcpServers": []})
        session_id: str = reply["result"]["sessionId"]
        return session_id

    def load(self, session_id: str, cwd: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """session/load: the response and the session's updates that came before it."""
        since = len(self.received)
        reply = self.call(
            "session/load", {"sessionId": session_id, "cwd": str(cwd), "mcpServers": []}
        )
        replayed = [
            m["params"]["update"]
            for m in self.received[since:-1]  # the response is the last message received
            if m.get("method") == "session/update" and m["params"]["sessionId"] == session_id
        ]
        return reply, replayed

    def prompt(self, session_id: str, text: str) -> dict[str, Any]:
        self.prompts.append((len(self.received), text))
        return self.call(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]},
        )
