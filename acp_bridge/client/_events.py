"""What an editor observes during a session, as plain values: the reducer's input.

A session's history, as an editor sees it, is a sequence of three kinds of event:
`PromptSent` (the user pressed enter: a `session/prompt` went out), the `params` of each
`session/update` notification (plain JSON dicts, exactly as on the wire), and
`PermissionAsked` (a `session/request_permission` arrived, and what the editor answered).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

__all__ = ["EditorEvent", "PermissionAsked", "PromptSent", "update_of"]


@dataclass(frozen=True, slots=True)
class PromptSent:
    """The editor sent `session/prompt` with this text: a new turn starts here."""

    text: str


@dataclass(frozen=True, slots=True)
class PermissionAsked:
    """A `session/request_permission` the editor received (`params` as on the wire).

    `chosen` is the `optionId` the editor answered with; None when it answered `cancelled`
    or has not answered.
    """

    params: Mapping[str, Any] = field(hash=False)
    chosen: str | None = None

    @property
    def tool_call(self) -> Mapping[str, Any]:
        tool_call: Mapping[str, Any] = self.params.get("toolCall") or {}
        return tool_call

    @property
    def tool_call_id(self) -> str:
        return str(self.tool_call.get("toolCallId", ""))

    @property
    def title(self) -> str | None:
        title = self.tool_call.get("title")
        return None if title is None else str(title)

    @property
    def option_kinds(self) -> tuple[str, ...]:
        return tuple(str(o.get("kind")) for o in self.params.get("options") or ())

    @property
    def chosen_kind(self) -> str | None:
        """The `kind` of the chosen option (`allow_once`, ...), None when cancelled."""
        for option in self.params.get("options") or ():
            if option.get("optionId") == self.chosen:
                return str(option.get("kind"))
        return None


EditorEvent: TypeAlias = Mapping[str, Any] | PromptSent | PermissionAsked
"""One reducer input: `session/update` params (a mapping), `PromptSent` or `PermissionAsked`."""


def update_of(params: Mapping[str, Any]) -> Mapping[str, Any]:
    """The `update` object of `session/update` params (a bare update is accepted as is)."""
    if "sessionUpdate" in params:
        return params
    update: Mapping[str, Any] = params.get("update") or {}
    return update
