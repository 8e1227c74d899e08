"""What the SSE decoder (`_sse`) hands out: events, comments and JSON found outside SSE framing,
and the bracket scan that finds where such a JSON value ends."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

from acp_bridge._json import JsonValue

__all__ = ["JsonBalance", "RawJson", "SseComment", "SseEvent", "SseItem", "raw_json"]


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event.

    `event` is "message" unless an `event:` field named it. `fields` holds non-standard
    fields (joined with newlines when repeated). `terminated` is False for an event that
    was flushed at EOF without its blank line (it may have been cut).
    """

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None
    fields: Mapping[str, str] = field(default_factory=dict)
    terminated: bool = True


@dataclass(frozen=True, slots=True)
class SseComment:
    """A comment line (`: OPENROUTER PROCESSING`); useful to watchdogs and traces only."""

    text: str


@dataclass(frozen=True, slots=True)
class RawJson:
    """A JSON value found outside SSE framing. `value` is None when it did not parse."""

    text: str
    value: JsonValue | None
    complete: bool = True


SseItem: TypeAlias = SseEvent | SseComment | RawJson


class JsonBalance:
    """Finds where a JSON object or array ends by tracking brackets outside strings."""

    __slots__ = ("depth", "escaped", "in_string")

    def __init__(self) -> None:
        self.depth = 0
        self.in_string = False
        self.escaped = False

    def scan(self, text: str) -> int:
        """Index just past the closing bracket of the top-level value, or -1 if still open."""
        for position, char in enumerate(text):
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif char == "\\":
                    self.escaped = True
                elif char == '"':
                    self.in_string = False
            elif char == '"':
                self.in_string = True
            elif char in "{[":
                self.depth += 1
            elif char in "}]":
                self.depth -= 1
                if self.depth <= 0:
                    return position + 1
        return -1


def raw_json(text: str, *, complete: bool) -> RawJson:
    """The `RawJson` item of `text`, a JSON value found outside SSE framing."""
    value: JsonValue | None
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    return RawJson(text=text, value=value, complete=complete)
