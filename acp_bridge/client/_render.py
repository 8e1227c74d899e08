"""Plain-text rendering of an editor view, for terminals and test failure messages.

One line label per entry (`you`, `agent`, `thought`, `tool`, `plan`, `retry`), text wrapped
under a hanging indent, tool calls with their status, what they touch and the permission
answer the editor gave.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from acp_bridge.client._entries import (
    Entry,
    MessageEntry,
    PlanEntry,
    RetryNotice,
    ToolCallEntry,
)
from acp_bridge.client._events import PermissionAsked

__all__ = ["STATUS_MARKS", "render_view"]

_LABEL_WIDTH = 9
_LABELS = {"user": "you", "agent": "agent", "thought": "thought"}
STATUS_MARKS = {"pending": "…", "in_progress": "▸", "completed": "✓", "failed": "✗"}


def _block(label: str, text: str, width: int) -> list[str]:
    indent = " " * _LABEL_WIDTH
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        wrapped = textwrap.wrap(
            paragraph,
            width=max(width, _LABEL_WIDTH + 20),
            initial_indent=indent,
            subsequent_indent=indent,
            drop_whitespace=True,
        )
        lines.extend(wrapped or [indent])
    lines[0] = label.ljust(_LABEL_WIDTH) + lines[0][_LABEL_WIDTH:]
    return lines


def _content_line(item: Mapping[str, Any]) -> str:
    kind = item.get("type")
    if kind == "diff":
        new_lines = len(str(item.get("newText") or "").splitlines())
        change = "new file" if item.get("oldText") is None else "edit"
        return f"diff {item.get('path')} ({change}, {new_lines} line{'s' * (new_lines != 1)})"
    if kind == "terminal":
        return f"terminal {item.get('terminalId')}"
    inner = item.get("content")
    if isinstance(inner, Mapping) and inner.get("type") == "text":
        first = str(inner.get("text", "")).strip().splitlines() or [""]
        more = " …" if len(first) > 1 else ""
        return textwrap.shorten(first[0], 80, placeholder=" …") + more
    return f"[{kind}]"


def _tool_lines(entry: ToolCallEntry, prompts: Sequence[PermissionAsked], width: int) -> list[str]:
    mark = STATUS_MARKS.get(entry.status, "?")
    head = f"{mark} {entry.title or entry.tool_call_id}  [{entry.kind}, {entry.status}]"
    lines = _block("tool", head, width)
    indent = " " * (_LABEL_WIDTH + 2)
    for prompt in prompts:
        answer = prompt.chosen_kind or "cancelled"
        lines.append(f"{indent}permission asked: answered {answer}")
    for item in entry.content:
        lines.append(indent + _content_line(item))
    return lines


def _plan_lines(entry: PlanEntry, width: int) -> list[str]:
    items = [
        f"[{'x' if item.get('status') == 'completed' else ' '}] {item.get('content', '')}"
        for item in entry.items
    ]
    return _block("plan", "\n".join(items) or "(empty)", width)


def render_view(
    entries: Iterable[Entry],
    permission_prompts: Sequence[PermissionAsked] = (),
    *,
    width: int = 100,
) -> str:
    """The entries as labelled, wrapped plain text (no colour, no trailing newline)."""
    lines: list[str] = []
    for entry in entries:
        if isinstance(entry, MessageEntry):
            lines.extend(_block(_LABELS[entry.role], entry.text, width))
        elif isinstance(entry, ToolCallEntry):
            asked = [p for p in permission_prompts if p.tool_call_id == entry.tool_call_id]
            lines.extend(_tool_lines(entry, asked, width))
        elif isinstance(entry, PlanEntry):
            lines.extend(_plan_lines(entry, width))
        elif isinstance(entry, RetryNotice) and entry.reason == "gave_up":
            # RESET-010: the bridge stopped retrying; the error follows.
            lines.extend(_block("retry", f"✗ gave up after attempt {entry.attempt}", width))
        elif isinstance(entry, RetryNotice):
            what = f"attempt {entry.attempt}" if entry.attempt is not None else "a new attempt"
            why = f" after {entry.reason}" if entry.reason else ""
            lines.extend(_block("retry", f"↻ retrying: {what}{why}", width))
    return "\n".join(line.rstrip() for line in lines)
