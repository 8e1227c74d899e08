"""Fakes for the tool tests: a scripted editor (fs + terminals) and a workspace on disk.

The fake editor records every call, keeps "unsaved buffers" that differ from the disk (a
read returns the buffer, as a real editor does), simulates terminals whose commands end
when the script says (or never, until killed), and fails the test on any call to a method
its capabilities do not advertise.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_bridge.errors import PeerError
from acp_bridge.tools import (
    EditorCapabilities,
    ExitStatus,
    TerminalOutput,
    ToolContent,
    ToolContext,
)

# A terminal script answers (command, args) with (output, exit status); None: never ends.
TerminalScript = Callable[[str, Sequence[str]], tuple[str, ExitStatus | None]]


@dataclass
class FakeTerminal:
    command: str
    args: list[str]
    cwd: str | None
    output_byte_limit: int | None
    output: str
    status: ExitStatus | None
    exited: anyio.Event = field(default_factory=anyio.Event)
    killed: bool = False
    released: bool = False


class FakeEditor:
    """An `EditorClient` that records its calls. Only advertised methods may be called."""

    def __init__(
        self,
        capabilities: EditorCapabilities,
        *,
        buffers: Mapping[str, str] | None = None,
        script: TerminalScript | None = None,
        fail: Mapping[str, PeerError] | None = None,
    ) -> None:
        self._capabilities = capabilities
        self.buffers = dict(buffers or {})
        self.script = script or (lambda command, args: ("", ExitStatus(exit_code=0)))
        self.fail = dict(fail or {})
        self.calls: list[tuple[str, str]] = []
        self.terminals: dict[str, FakeTerminal] = {}
        self.create_started = anyio.Event()
        self.create_gate: anyio.Event | None = None

    @property
    def capabilities(self) -> EditorCapabilities:
        return self._capabilities

    def methods(self) -> list[str]:
        return [method for method, _ in self.calls]

    def _enter(self, method: str, subject: str, advertised: bool) -> None:
        assert advertised, f"{method} was called but the client did not advertise it"
        self.calls.append((method, subject))
        if method in self.fail:
            raise self.fail[method]

    async def read_text_file(
        self, path: str, *, line: int | None = None, limit: int | None = None
    ) -> str:
        self._enter("fs/read_text_file", path, self._capabilities.read_text_file)
        assert Path(path).is_absolute()
        if path in self.buffers:
            text = self.buffers[path]
        else:
            try:
                text = await anyio.Path(path).read_text(encoding="utf-8")
            except OSError as error:
                raise PeerError(-32002, f"Resource not found: {path}") from error
        if line is None and limit is None:
            return text
        lines = text.splitlines(keepends=True)
        start = (line or 1) - 1
        return "".join(lines[start : None if limit is None else start + limit])

    async def write_text_file(self, path: str, content: str) -> None:
        self._enter("fs/write_text_file", path, self._capabilities.write_text_file)
        assert Path(path).is_absolute()
        await anyio.Path(path).write_text(content, encoding="utf-8")  # saves the buffer
        self.buffers.pop(path, None)

    async def terminal_create(
        self,
        command: str,
        *,
        args: Sequence[str] = (),
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        output_byte_limit: int | None = None,
    ) -> str:
        self._enter("terminal/create", command, self._capabilities.terminal)
        self.create_started.set()
        if self.create_gate is not None:
            await self.create_gate.wait()
        terminal_id = f"term-{len(self.terminals) + 1}"
        output, status = self.script(command, args)
        terminal = FakeTerminal(command, list(args), cwd, output_byte_limit, output, status)
        if status is not None:
            terminal.exited.set()
        self.terminals[terminal_id] = terminal
        return terminal_id

    def _terminal(self, method: str, terminal_id: str) -> FakeTerminal:
        self._enter(method, terminal_id, self._capabilities.terminal)
        terminal = self.terminals[terminal_id]
        assert not terminal.released, f"{method} on a released terminal"
        return terminal

    async def terminal_output(self, terminal_id: str) -> TerminalOutput:
        terminal = self._terminal("terminal/output", terminal_id)
        return TerminalOutput(terminal.output, truncated=False, exit_status=terminal.status)

    async def terminal_wait_for_exit(self, terminal_id: str) -> ExitStatus:
        terminal = self._terminal("terminal/wait_for_exit", terminal_id)
        await terminal.exited.wait()
        assert terminal.status is not None
        return terminal.status

    def _stop(self, terminal: FakeTerminal) -> None:
        if not terminal.exited.is_set():
            terminal.killed = True
            terminal.status = ExitStatus(signal="SIGKILL")
            terminal.exited.set()

    async def terminal_kill(self, terminal_id: str) -> None:
        self._stop(self._terminal("terminal/kill", terminal_id))

    async def terminal_release(self, terminal_id: str) -> None:
        terminal = self._terminal("terminal/release", terminal_id)
        self._stop(terminal)
        terminal.released = True


EditorFactory = Callable[..., FakeEditor]
ContextFactory = Callable[..., ToolContext]


@pytest.fixture
def make_editor() -> EditorFactory:
    """`make_editor(read=True, write=True, terminal=True, buffers=..., script=..., fail=...)`."""

    def make(
        *, read: bool = True, write: bool = True, terminal: bool = True, **options: Any
    ) -> FakeEditor:
        capabilities = EditorCapabilities(
            read_text_file=read, write_text_file=write, terminal=terminal
        )
        return FakeEditor(capabilities, **options)

    return make


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace `ws/` with a few files, beside a directory `outside/` holding a secret."""
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 1\n", encoding="utf-8")
    (root / "notes.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n", encoding="utf-8")
    return root


@pytest.fixture
def make_ctx(workspace: Path) -> ContextFactory:
    """`make_ctx(editor=None, extra_roots=(), report=None)`: a `ToolContext` on the workspace."""

    def make(
        editor: FakeEditor | None = None,
        *,
        extra_roots: Sequence[Path] = (),
        report: Callable[[tuple[ToolContent, ...]], Awaitable[None]] | None = None,
    ) -> ToolContext:
        return ToolContext(
            session_id="sess-1",
            cwd=workspace,
            roots=(workspace, *extra_roots),
            editor=editor,
            effect_key="effect-1",
            report=report,
        )

    return make


@pytest.fixture
def traced() -> Iterator[None]:
    """tracemalloc on for the test (left as it was found)."""
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        yield
    finally:
        if not was_tracing:
            tracemalloc.stop()
