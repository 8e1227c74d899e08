"""The reference editor-side reducer: `session/update`s in, what the editor shows out.

Pure and sans-IO: feed it events (`PromptSent`, `session/update` params, `PermissionAsked`)
and read the `EditorView`. It validates nothing; it implements the algorithm of
spec/reset-extension.md section 5 and, for comparison, two editors that do less:

- `ReduceMode.RESET_AWARE`: honours `messageId` and the reset flag (RESET-005): what every
  editor should show.
- `ReduceMode.NAIVE`: a v1 editor that honours `messageId` but ignores `_meta`: a retried
  attempt starts a new message next to the abandoned partial one (RESET-006).
- `ReduceMode.APPEND_ONLY`: ignores `messageId` and `_meta`: plain concatenation.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from acp_bridge.client._entries import (
    Entry,
    MessageEntry,
    MessageRole,
    PlanEntry,
    RetryNotice,
    ToolCallEntry,
)
from acp_bridge.client._events import EditorEvent, PermissionAsked, PromptSent, update_of
from acp_bridge.client._render import render_view

__all__ = ["EditorView", "ReduceMode", "reduce"]

_ROLE_OF_UPDATE: dict[str, MessageRole] = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
}


class ReduceMode(enum.StrEnum):
    RESET_AWARE = "reset_aware"
    NAIVE = "naive"
    APPEND_ONLY = "append_only"


def _reset_marker(update: Mapping[str, Any]) -> RetryNotice | None:
    meta = update.get("_meta")
    if not isinstance(meta, Mapping) or meta.get("reset") is not True:
        return None
    attempt, reason = meta.get("attempt"), meta.get("reason")
    # RESET-009: any attempt value and any reason string are accepted.
    return RetryNotice(
        attempt if isinstance(attempt, int) and not isinstance(attempt, bool) else None,
        reason if isinstance(reason, str) else None,
    )


def _chunk_text(update: Mapping[str, Any]) -> str:
    content = update.get("content")
    if not isinstance(content, Mapping):
        return ""
    if content.get("type") == "text":
        return str(content.get("text", ""))
    # Images, audio and resources: an editor shows something in their place.
    label = content.get("uri") or content.get("mimeType") or ""
    return f"[{content.get('type')}{': ' + str(label) if label else ''}]"


@dataclass(slots=True)
class EditorView:
    """What one editor shows for a session. Feed it with `apply`, or build it with `reduce`.

    `entries` is the conversation in display order; `boundary` is the index where the current
    model call's output starts (after the prompt, or after the last tool call shown).
    """

    mode: ReduceMode = ReduceMode.RESET_AWARE
    entries: list[Entry] = field(default_factory=list)
    permission_prompts: list[PermissionAsked] = field(default_factory=list)
    retries: list[RetryNotice] = field(default_factory=list)
    available_commands: tuple[str, ...] = ()
    current_mode: str | None = None
    title: str | None = None
    boundary: int = 0
    _tool_calls: dict[str, ToolCallEntry] = field(default_factory=dict, init=False, repr=False)

    # -- input ---------------------------------------------------------------------------

    def apply(self, event: EditorEvent) -> None:
        """Takes one event: `PromptSent`, `PermissionAsked` or `session/update` params."""
        if isinstance(event, PromptSent):
            self.entries.append(MessageEntry("user", None, [event.text]))
            self.boundary = len(self.entries)
        elif isinstance(event, PermissionAsked):
            self.permission_prompts.append(event)
            if event.tool_call_id not in self._tool_calls:
                self._upsert_tool_call(event.tool_call)
        else:
            self._apply_update(update_of(event))

    def _apply_update(self, update: Mapping[str, Any]) -> None:
        kind = update.get("sessionUpdate")
        if isinstance(kind, str) and kind in _ROLE_OF_UPDATE:
            self._apply_chunk(_ROLE_OF_UPDATE[kind], update)
        elif kind in ("tool_call", "tool_call_update"):
            self._upsert_tool_call(update)
            # The next model call starts after a tool call (RESET-005, RESET-007).
            self.boundary = len(self.entries)
        elif kind == "plan":
            self._apply_plan(update)
        elif kind == "available_commands_update":
            commands = update.get("availableCommands") or ()
            self.available_commands = tuple(str(c.get("name")) for c in commands)
        elif kind == "current_mode_update":
            self.current_mode = update.get("currentModeId")
        elif kind == "session_info_update" and "title" in update:
            self.title = update.get("title")
        # Anything else (config options, usage, unknown kinds) changes nothing shown here.

    def _apply_chunk(self, role: MessageRole, update: Mapping[str, Any]) -> None:
        text = _chunk_text(update)
        message_id = update.get("messageId")
        if self.mode is not ReduceMode.APPEND_ONLY and message_id is not None:
            message_id = str(message_id)
        else:
            message_id = None  # append-only: every chunk continues the current message
        if role == "user":
            self._apply_user_chunk(message_id, text)
            return
        # The spec's algorithm honours the marker on either agent chunk kind, although the
        # bridge only ever puts it on an agent_message_chunk (RESET-004).
        marker = _reset_marker(update)
        if marker is not None and self.mode is ReduceMode.RESET_AWARE:
            self._discard_current_model_call()  # RESET-005
            self.retries.append(marker)
            self.entries.append(marker)
        last = self._last_message()
        if last is not None and last.role == role and last.message_id == message_id:
            last.parts.append(text)
        elif text:
            self.entries.append(MessageEntry(role, message_id, [text]))

    def _apply_user_chunk(self, message_id: str | None, text: str) -> None:
        """A replayed user message (session/load) opens a turn, like a prompt sent."""
        last = self.entries[-1] if self.entries else None
        if isinstance(last, MessageEntry) and last.role == "user" and last.message_id == message_id:
            last.parts.append(text)
            return
        if text:
            self.entries.append(MessageEntry("user", message_id, [text]))
        self.boundary = len(self.entries)

    def _discard_current_model_call(self) -> None:
        """RESET-005: drop every agent message and thought since the current model call
        began; tool calls, plans, retry notices and earlier model calls stay."""
        kept = [
            entry
            for entry in self.entries[self.boundary :]
            if not (isinstance(entry, MessageEntry) and entry.role != "user")
        ]
        del self.entries[self.boundary :]
        self.entries.extend(kept)

    def _last_message(self) -> MessageEntry | None:
        for entry in reversed(self.entries[self.boundary :]):
            if isinstance(entry, MessageEntry):
                return entry
        return None

    def _upsert_tool_call(self, fields: Mapping[str, Any]) -> None:
        tool_call_id = str(fields.get("toolCallId", ""))
        entry = self._tool_calls.get(tool_call_id)
        if entry is None:
            entry = self._tool_calls[tool_call_id] = ToolCallEntry(tool_call_id)
            self.entries.append(entry)
        if "title" in fields:
            entry.title = str(fields["title"])
        if fields.get("kind") is not None:
            entry.kind = str(fields["kind"])
        if fields.get("status") is not None:
            entry.status = str(fields["status"])
        if fields.get("content") is not None:
            entry.content = list(fields["content"])
        if fields.get("locations") is not None:
            entry.locations = list(fields["locations"])
        if "rawInput" in fields:
            entry.raw_input = fields["rawInput"]
        if "rawOutput" in fields:
            entry.raw_output = fields["rawOutput"]
        meta = fields.get("_meta")
        if isinstance(meta, Mapping):
            entry.meta.update(meta)

    def _apply_plan(self, update: Mapping[str, Any]) -> None:
        items = list(update.get("entries") or ())
        for entry in self.entries:
            if isinstance(entry, PlanEntry):
                entry.items = items
                return
        self.entries.append(PlanEntry(items))

    # -- output --------------------------------------------------------------------------

    @property
    def messages(self) -> tuple[str, ...]:
        """The agent messages shown, in order."""
        return tuple(
            e.text for e in self.entries if isinstance(e, MessageEntry) and e.role == "agent"
        )

    @property
    def thoughts(self) -> tuple[str, ...]:
        return tuple(
            e.text for e in self.entries if isinstance(e, MessageEntry) and e.role == "thought"
        )

    @property
    def tool_calls(self) -> tuple[ToolCallEntry, ...]:
        """The tool calls shown, in the order they first appeared."""
        return tuple(e for e in self.entries if isinstance(e, ToolCallEntry))

    def tool_call(self, tool_call_id: str) -> ToolCallEntry | None:
        return self._tool_calls.get(tool_call_id)

    def text(self, separator: str = "\n\n") -> str:
        """The visible agent text: the agent messages joined by `separator`."""
        return separator.join(self.messages)

    def render(self, *, width: int = 100) -> str:
        """The view as readable plain text for a terminal (see `render_view`)."""
        return render_view(self.entries, self.permission_prompts, width=width)


def reduce(
    events: Iterable[EditorEvent], mode: ReduceMode | str = ReduceMode.RESET_AWARE
) -> EditorView:
    """The view an editor of kind `mode` shows after `events` (see the module docstring)."""
    view = EditorView(ReduceMode(mode))
    for event in events:
        view.apply(event)
    return view
