"""A sans-IO Server-Sent Events decoder that keeps what generic decoders lose.

Feed it bytes (or text) as they arrive and get `SseItem`s back; call `end()` at EOF. It
follows the WHATWG event-stream rules (CRLF/CR/LF line ends, a leading BOM, comments,
multi-line `data:`, `id:`, `retry:`) with three deliberate additions for model streams:

- the final event is dispatched at EOF even without its blank line (`terminated=False`);
- fields the standard does not know (llama.cpp's `error:`) are kept in `SseEvent.fields`;
- a JSON value that is not framed as SSE (Gemini appends a raw, pretty-printed
  `{"error": ...}` or sends one as the whole body) becomes one `RawJson` item.

No I/O and no event loop: the transport drives it, tests call it directly.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

from acp_bridge._json import JsonValue

__all__ = ["RawJson", "SseComment", "SseDecoder", "SseEvent", "SseItem"]

_LINE_END = re.compile(r"\r\n?|\n")
_BOM = "\ufeff"


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


class _JsonBalance:
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


class SseDecoder:
    """Incremental event-stream decoder: `feed(chunk) -> items`, then `end() -> items`."""

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._at_start = True
        self._skip_lf = False
        self._partial = ""
        self._data: list[str] = []
        self._has_data = False
        self._event = ""
        self._fields: dict[str, str] = {}
        self._last_id: str | None = None
        self._retry: int | None = None
        self._raw: list[str] | None = None
        self._raw_balance = _JsonBalance()

    @property
    def last_event_id(self) -> str | None:
        return self._last_id

    @property
    def retry(self) -> int | None:
        """The last reconnection time (ms) the server announced with `retry:`."""
        return self._retry

    def feed(self, chunk: bytes | str) -> list[SseItem]:
        text = self._utf8.decode(chunk) if isinstance(chunk, bytes) else chunk
        return self._feed_text(text)

    def end(self) -> list[SseItem]:
        """Flush at EOF: the last line, a pending event, an unfinished raw JSON value."""
        items = self._feed_text(self._utf8.decode(b"", final=True))
        if self._partial:
            line, self._partial = self._partial, ""
            self._line(line, items)
        if self._raw is not None:
            items.append(_raw_json("".join(self._raw), complete=False))
            self._raw = None
        if self._has_data or self._fields:
            items.append(self._dispatch(terminated=False))
        self._reset_event()
        return items

    def _feed_text(self, text: str) -> list[SseItem]:
        if not text:
            return []
        if self._at_start:
            # The stream's single leading BOM is not content (WHATWG "decode" step).
            self._at_start = False
            text = text.removeprefix(_BOM)
        if self._skip_lf:
            # The previous chunk ended in CR; an LF now completes that CRLF, not a new line.
            self._skip_lf = False
            text = text.removeprefix("\n")
        buffer = self._partial + text
        items: list[SseItem] = []
        if "\r" not in buffer:
            # The common case (LF only): a plain split, much cheaper than the regex per line.
            lines = buffer.split("\n")
            self._partial = lines.pop()
            for line in lines:
                self._line(line, items)
            return items
        start = 0
        for match in _LINE_END.finditer(buffer):
            self._line(buffer[start : match.start()], items)
            start = match.end()
        self._partial = buffer[start:]
        if start and buffer[start - 1] == "\r" and start == len(buffer):
            self._skip_lf = True
        return items

    def _line(self, line: str, items: list[SseItem]) -> None:
        if self._raw is not None:
            self._raw_line(line, items)
        elif line.startswith("data:"):  # the hot path: one per event
            self._data.append(line[6:] if line.startswith("data: ") else line[5:])
            self._has_data = True
        elif not line:
            if self._has_data or self._fields:
                items.append(self._dispatch(terminated=True))
            self._reset_event()
        elif line[0] == ":":
            items.append(SseComment(line[1:].removeprefix(" ")))
        elif not self._has_data and not self._fields and line.lstrip()[:1] in ("{", "["):
            # Not an SSE field at all: a bare JSON value (Gemini's raw error body).
            self._raw = []
            self._raw_balance = _JsonBalance()
            self._raw_line(line, items)
        else:
            name, _, value = line.partition(":")
            self._field(name, value.removeprefix(" "))

    def _raw_line(self, line: str, items: list[SseItem]) -> None:
        assert self._raw is not None
        end = self._raw_balance.scan(line + "\n")
        if end < 0:
            self._raw.append(line + "\n")
            return
        self._raw.append(line[:end])
        items.append(_raw_json("".join(self._raw), complete=True))
        self._raw = None

    def _field(self, name: str, value: str) -> None:
        if name == "data":
            self._data.append(value)
            self._has_data = True
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                self._retry = int(value)
        elif name in self._fields:
            self._fields[name] += "\n" + value
        else:
            self._fields[name] = value

    def _dispatch(self, *, terminated: bool) -> SseEvent:
        return SseEvent(
            data="\n".join(self._data),
            event=self._event or "message",
            id=self._last_id,
            retry=self._retry,
            fields=self._fields,
            terminated=terminated,
        )

    def _reset_event(self) -> None:
        self._data = []
        self._has_data = False
        self._event = ""
        self._fields = {}


def _raw_json(text: str, *, complete: bool) -> RawJson:
    value: JsonValue | None
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    return RawJson(text=text, value=value, complete=complete)
