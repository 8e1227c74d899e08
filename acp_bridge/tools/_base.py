"""The tool seam: what a tool is, what it shows the editor, and what it returns.

A tool is described to the model (`name`, `description`, `parameters`), previewed for the
editor before it runs (`preview`: title, kind, locations, and for edits the diff the user
approves), and run once the permission gate let it (`run`). Tools never ask for permission
themselves and never decide about retries: the turn engine does.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeAlias

from acp_bridge._json import JsonObject, JsonValue

__all__ = [
    "DiffContent",
    "EditorCapabilities",
    "EditorClient",
    "ExitStatus",
    "Location",
    "MediaContent",
    "PlanEntry",
    "TerminalContent",
    "TerminalOutput",
    "TextContent",
    "Tool",
    "ToolContent",
    "ToolContext",
    "ToolKind",
    "ToolOutcome",
    "ToolPreview",
]


class ToolKind(enum.StrEnum):
    """ACP's tool kinds (`ToolKind` in the v1 schema)."""

    READ = "read"
    EDIT = "edit"
    DELETE = "delete"
    MOVE = "move"
    SEARCH = "search"
    EXECUTE = "execute"
    THINK = "think"
    FETCH = "fetch"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class TextContent:
    text: str


@dataclass(frozen=True, slots=True)
class DiffContent:
    """A file change; `old_text` is None for a new file. `path` is absolute."""

    path: str
    new_text: str
    old_text: str | None = None


@dataclass(frozen=True, slots=True)
class TerminalContent:
    """An editor terminal embedded in the tool call, shown live by the editor."""

    terminal_id: str


@dataclass(frozen=True, slots=True)
class MediaContent:
    """An image, audio clip or embedded resource a tool returned (an MCP result's content).

    `kind` is ``image``, ``audio`` or ``resource``. `data` is base64 (an image, audio, or a
    binary resource's blob); a text resource has `text` instead. `uri` names a resource (or
    an image's source). The editor shows it as an ACP content block; the model is sent its
    bytes where its provider takes that media type (MCP-MEDIA-001, MCP-MEDIA-002).
    """

    kind: str
    mime_type: str
    data: str = ""
    uri: str | None = None
    text: str | None = None


ToolContent: TypeAlias = TextContent | DiffContent | TerminalContent | MediaContent


@dataclass(frozen=True, slots=True)
class Location:
    """A place the tool touches, so the editor can follow along. Absolute path, 1-based line."""

    path: str
    line: int | None = None


@dataclass(frozen=True, slots=True)
class ToolPreview:
    """What the editor is shown before the tool runs (and what the user approves).

    `permission_scope` is what allow_always / reject_always remember: the tool name for
    most tools, the command prefix (e.g. ``"git status"``) for shell commands.
    `scope_label` is the human form of it for the option's name. `group_scope` (with its
    label) is a wider scope the user may allow always as well, e.g. every tool of one MCP
    server (MCP-PERM-001).
    """

    title: str
    kind: ToolKind
    locations: tuple[Location, ...] = ()
    content: tuple[ToolContent, ...] = ()
    permission_scope: str = ""
    scope_label: str = ""
    inside_workspace: bool = True
    group_scope: str = ""
    group_label: str = ""


@dataclass(frozen=True, slots=True)
class PlanEntry:
    """One step of the model's plan (ACP `PlanEntry`)."""

    content: str
    priority: str  # high, medium, low
    status: str  # pending, in_progress, completed


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """The result of running a tool.

    `for_model` is what the model reads (truncated with a clear marker when large);
    `content` is what the editor shows (kept whole where the protocol allows). `final`: the
    effect happened, or may have (every outcome a tool returns); False only for a failure
    that changed nothing (a `ToolError`), which a re-run of the same call runs again instead
    of reusing (EFFECT-FINAL-001).
    `plan`, when set, is the whole plan the editor is shown next (the planning tool).
    """

    ok: bool
    for_model: str
    content: tuple[ToolContent, ...] = ()
    raw_output: JsonValue = None
    final: bool = True
    plan: tuple[PlanEntry, ...] | None = None


@dataclass(frozen=True, slots=True)
class EditorCapabilities:
    """What the client advertised in `initialize` (`clientCapabilities`)."""

    read_text_file: bool = False
    write_text_file: bool = False
    terminal: bool = False


@dataclass(frozen=True, slots=True)
class ExitStatus:
    exit_code: int | None = None
    signal: str | None = None


@dataclass(frozen=True, slots=True)
class TerminalOutput:
    output: str
    truncated: bool
    exit_status: ExitStatus | None = None


class EditorClient(Protocol):
    """The editor's side of ACP (`fs/*`, `terminal/*`), as the agent layer implements it.

    Contract: a method may only be called when `capabilities` says the client advertised
    it; every call may raise `PeerError` (the editor answered with an error) or
    `PeerGone`. All paths are absolute.
    """

    @property
    def capabilities(self) -> EditorCapabilities: ...

    async def read_text_file(
        self, path: str, *, line: int | None = None, limit: int | None = None
    ) -> str: ...

    async def write_text_file(self, path: str, content: str) -> None: ...

    async def terminal_create(
        self,
        command: str,
        *,
        args: Sequence[str] = (),
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        output_byte_limit: int | None = None,
    ) -> str: ...

    async def terminal_output(self, terminal_id: str) -> TerminalOutput: ...

    async def terminal_wait_for_exit(self, terminal_id: str) -> ExitStatus: ...

    async def terminal_kill(self, terminal_id: str) -> None: ...

    async def terminal_release(self, terminal_id: str) -> None: ...


@dataclass(slots=True)
class ToolContext:
    """Everything a tool may use while previewing or running.

    Attributes:
        session_id: the ACP session.
        cwd: the session's absolute working directory (the workspace root).
        roots: every directory the tool may touch (cwd first, then additionalDirectories).
        editor: the editor's fs/terminal methods, or None for a client that offered none.
        effect_key: the effect key of this call (run only; see spec/effect-keys.md).
        report: sends interim content to the editor while the tool runs (e.g. the
            embedded terminal as soon as it exists).
        memo: what a call's preview leaves for its run, keyed by tool name (the engine
            previews and runs a call with one context, copied with `dataclasses.replace`,
            which keeps this dict): an edit's run reuses the texts its preview computed.
    """

    session_id: str
    cwd: Path
    roots: tuple[Path, ...]
    editor: EditorClient | None = None
    effect_key: str | None = None
    report: Callable[[tuple[ToolContent, ...]], Awaitable[None]] | None = None
    extra: dict[str, JsonValue] = field(default_factory=dict)
    memo: dict[str, object] = field(default_factory=dict)


class Tool(Protocol):
    """A tool the model may call.

    Contract:
        - `parameters` is a JSON Schema object that OpenAI, Anthropic and Gemini accept
          (type object, properties, required; no $ref, no oneOf at the top).
        - `side_effect` is True when running it changes anything (files, processes).
        - `preview` validates the arguments and never changes anything; it raises
          `ToolError` with a message for the model when the arguments are unusable.
        - `run` does the work; it raises `ToolError` for a failure the model should read.
        - Optionally, `ignores_unknown_arguments = True` says the tool reads only the keys its
          schema declares, so others are left out of its effect keys (EFFECT-CANON-001).
          It must be cancellable (anyio) and release what it holds (terminals) when cancelled.
    """

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def parameters(self) -> JsonObject: ...

    @property
    def kind(self) -> ToolKind: ...

    @property
    def side_effect(self) -> bool: ...

    async def preview(self, arguments: JsonObject, ctx: ToolContext) -> ToolPreview: ...

    async def run(self, arguments: JsonObject, ctx: ToolContext) -> ToolOutcome: ...
