"""OpenAI Chat Completions tool-call fragments -> tool-call events (sans-IO).

Fragments are keyed by `index`; a new `id` *with a name* at a used index starts a new
call once the previous call's arguments are complete (Ollama's index reuse), while fresh
ids on argument fragments do not (LM Studio); arguments may arrive as an object
(model-streams.md §1). Calls complete at `finish_reason` (or `[DONE]`); a call cut by
`max_tokens` is dropped (TURN-LENGTH-001).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from acp_bridge.providers._errors import ModelStreamError
from acp_bridge.providers._events import StreamEvent, ToolCallDelta, ToolCallStart
from acp_bridge.providers.http._payload import (
    as_object,
    as_str,
    complete_tool_call,
    is_complete_json,
)

__all__ = ["OpenAIToolCalls"]


@dataclass(slots=True)
class _Call:
    ordinal: int
    call_id: str | None
    name: str = ""
    fragments: list[str] = field(default_factory=list)
    started: bool = False
    completed: bool = False

    @property
    def raw(self) -> str:
        return "".join(self.fragments)


class OpenAIToolCalls:
    """The tool calls of one attempt, assembled from their fragments.

    `id_seed` (the stream's chunk id, when it has one) names the calls whose fragments
    carry no id: `call_<seed>_<ordinal>`.
    """

    def __init__(self, provider: str) -> None:
        self._provider = provider
        self.id_seed: str | None = None
        self._calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}

    def __bool__(self) -> bool:
        return bool(self._calls)

    def fragment(self, fragment: dict[str, Any], events: list[StreamEvent]) -> None:
        """Takes one element of a delta's `tool_calls`; appends the events it makes."""
        function = as_object(fragment.get("function"))
        call_id = as_str(fragment.get("id")) or None
        name = as_str(function.get("name"))
        arguments = function.get("arguments")
        text = (
            arguments
            if isinstance(arguments, str)
            else (json.dumps(arguments, ensure_ascii=False) if arguments is not None else "")
        )
        index = fragment.get("index")
        current = (
            self._by_index.get(index)
            if isinstance(index, int)
            else (self._calls[-1] if self._calls else None)
        )
        if current is None or current.completed or _starts_new_call(current, call_id, name):
            current = _Call(ordinal=len(self._calls), call_id=call_id)
            self._calls.append(current)
            if isinstance(index, int):
                self._by_index[index] = current
        if current.call_id is None:
            current.call_id = call_id
        if name and not current.name:
            current.name = name
        if text:
            current.fragments.append(text)
        if not current.started and current.name:
            current.started = True
            if current.call_id is None:
                current.call_id = self._synthesized_id(current.ordinal)
            events.append(ToolCallStart(current.call_id, current.name, current.ordinal))
            if current.raw:
                events.append(ToolCallDelta(current.call_id, current.ordinal, current.raw))
        elif current.started and text:
            assert current.call_id is not None
            events.append(ToolCallDelta(current.call_id, current.ordinal, text))

    def complete(self, events: list[StreamEvent], *, cut: bool) -> None:
        """Completes every call not completed yet; `cut`: the answer hit `max_tokens`."""
        for call in self._calls:
            if call.completed:
                continue
            call.completed = True
            call_id = call.call_id or self._synthesized_id(call.ordinal)
            try:
                events.append(complete_tool_call(self._provider, call_id, call.name, call.raw))
            except ModelStreamError:
                if not cut:
                    raise
                # TURN-LENGTH-001: cut by max_tokens, never executable; the attempt drops it
                # and the turn ends max_tokens (no retry would be cut any differently).

    def _synthesized_id(self, ordinal: int) -> str:
        if self.id_seed is None:
            self.id_seed = uuid.uuid4().hex[:16]
        return f"call_{self.id_seed}_{ordinal}"


def _starts_new_call(current: _Call, call_id: str | None, name: str) -> bool:
    """Whether a named fragment at a used index (or without index) begins another call.

    Ollama reuses index 0 for a whole parallel batch and older builds send no index; LM
    Studio sends a fresh id on every fragment of one call. So: a fragment without a name
    continues; another tool's name starts a new call; the same name starts one only once
    the current call's arguments are a complete JSON value.
    """
    if not name or (call_id is not None and call_id == current.call_id):
        return False
    if current.name and name != current.name:
        return True
    return is_complete_json(current.raw)
