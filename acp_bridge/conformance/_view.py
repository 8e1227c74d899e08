"""The editor view of the adapter contract, and the reference reducer's view of a wire.

A view is the JSON an adapter prints (spec/editor-conformance.md section 6.2):
`{"messages": [{"role", "text"}], "thoughts": [text], "toolCalls": [{"title", "status"}],
"permissionPrompts": [{"title"}], "retries": [{"attempt", "reason"}]}`. `view_of_wire`
computes it with `acp_bridge.client` (the reference) from the adapter's input.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from acp_bridge.client import (
    EditorEvent,
    EditorView,
    MessageEntry,
    PermissionAsked,
    PromptSent,
    ReduceMode,
    reduce,
)

__all__ = ["editor_events", "view_json", "view_of_wire"]


def _prompt_text(params: Mapping[str, Any]) -> str:
    blocks = params.get("prompt") or ()
    return "".join(
        str(b.get("text", "")) for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"
    )


def editor_events(wire: Iterable[Mapping[str, Any]]) -> Iterator[EditorEvent]:
    """The reducer's events in a wire exchange: prompts sent, updates, permission prompts."""
    for item in wire:
        message = item.get("message")
        if not isinstance(message, Mapping):
            continue
        method, params = message.get("method"), message.get("params")
        if not isinstance(params, Mapping):
            continue
        if item.get("from") == "client" and method == "session/prompt":
            yield PromptSent(_prompt_text(params))
        elif item.get("from") == "agent" and method == "session/update":
            yield params
        elif item.get("from") == "agent" and method == "session/request_permission":
            yield PermissionAsked(params)


def view_json(view: EditorView) -> dict[str, Any]:
    """An `EditorView` as the adapter contract's view JSON."""
    messages = [
        {"role": e.role, "text": e.text}
        for e in view.entries
        if isinstance(e, MessageEntry) and e.role != "thought"
    ]
    return {
        "messages": messages,
        "thoughts": list(view.thoughts),
        "toolCalls": [
            {"toolCallId": t.tool_call_id, "title": t.title, "status": t.status}
            for t in view.tool_calls
        ],
        "permissionPrompts": [
            {"toolCallId": p.tool_call_id, "title": p.title} for p in view.permission_prompts
        ],
        "retries": [{"attempt": r.attempt, "reason": r.reason} for r in view.retries],
    }


def view_of_wire(
    wire: Sequence[Mapping[str, Any]], mode: ReduceMode | str = ReduceMode.RESET_AWARE
) -> dict[str, Any]:
    """What the reference reducer (in `mode`) shows after `wire`, as view JSON."""
    return view_json(reduce(editor_events(wire), mode))
