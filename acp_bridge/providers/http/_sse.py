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
import re

from acp_bridge.providers.http._sse_items import (
    JsonBalance,
    SseComment,
    SseEvent,
    SseItem,
    raw_json,
)

__all__ = ["SseDecoder"]

_LINE_END = re.compile(r"\r\n?|\n")
_BOM = "\ufeff"
_TAIL_MAX = 64 * 1024
"""Most bytes of an unfinished event the fast path holds (a longer event takes the general
path, which holds a huge line without re-joining it per read)."""


class SseDecoder:
    """Incremental event-stream decoder: `feed(chunk) -> items`, then `end() -> items`."""

    def __init__(self) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._at_start = True
        self._skip_lf = False
        self._partial = ""
        # The pieces of a line still open after `_partial` (joined once its end arrives, so a
        # huge line costs O(n), not a copy of everything so far per chunk).
        self._held: list[str] = []
        self._data: list[str] = []
        self._has_data = False
        self._event = ""
        self._fields: dict[str, str] = {}
        self._last_id: str | None = None
        self._retry: int | None = None
        self._raw: list[str] | None = None
        self._raw_balance = JsonBalance()
        # True while nothing is pending between events (no partial line, no half-built
        # event, no raw JSON, no undecoded UTF-8 bytes): then a chunk that is only a
        # run of `data:` events can skip the line machinery (see `_plain_datas`).
        self._idle = False
        # The bytes after the last plain event a fast-path chunk held: the start of the next
        # event, not yet fed to the line machinery (`_plain_datas`); at most `_TAIL_MAX`.
        self._tail = b""

    @property
    def last_event_id(self) -> str | None:
        return self._last_id

    @property
    def retry(self) -> int | None:
        """The last reconnection time (ms) the server announced with `retry:`."""
        return self._retry

    def feed(self, chunk: bytes | str) -> list[SseItem]:
        if isinstance(chunk, bytes):
            if self._idle and (datas := self._plain_datas(chunk)) is not None:
                last_id, retry = self._last_id, self._retry
                return [SseEvent(data, id=last_id, retry=retry) for data in datas]
            if self._tail:
                chunk, self._tail = self._tail + chunk, b""
            items = self._feed_text(self._utf8.decode(chunk))
            self._idle = (self._is_idle() and not self._utf8.getstate()[0]) or self._park()
            return items
        if self._tail:
            chunk, self._tail = self._utf8.decode(self._tail) + chunk, b""
        items = self._feed_text(chunk)
        self._idle = self._is_idle() and not self._utf8.getstate()[0]
        return items

    def plain(self, chunk: bytes) -> str | None:
        """The data of a chunk that is exactly one plain event (`data: <one line>` and the
        blank line, nothing pending before it), else None and nothing is consumed: then
        `feed` the chunk. What `feed` would return for it is `[SseEvent(data)]` (with the
        last id and retry, which no model stream decoder reads)."""
        if not self._idle or self._tail:
            return None
        if (
            chunk.startswith(b"data:")
            and chunk.find(b"\n") == len(chunk) - 2
            and chunk.endswith(b"\n")
            and b"\r" not in chunk
        ):
            return chunk[6 if chunk.startswith(b"data: ") else 5 : -2].decode("utf-8", "replace")
        return None

    def plain_events(self, chunk: bytes) -> list[str] | None:
        """The data of every event in a chunk made of plain events only (each `data: <one
        line>` and its blank line; the chunk may end inside the next one, which is held),
        else None and nothing is consumed: then `feed` the chunk. What `feed` would return
        for it is one `SseEvent(data)` per string (with the last id and retry, which no
        model stream decoder reads). One read of a fast stream carries dozens of events:
        they are split once, with no per-line machinery."""
        return self._plain_datas(chunk) if self._idle else None

    def _plain_datas(self, chunk: bytes) -> list[str] | None:
        """`plain_events` once the decoder is idle (see `_idle`).

        The result equals the general path's for the same bytes: UTF-8 decoding is
        context-free at an event's ASCII boundaries once no bytes are pending, and
        anything but LF-only `data:` lines (CR line ends, comments, other fields, several
        data lines, blank lines between events) is left to the general path, whole.
        """
        data = self._tail + chunk if self._tail else chunk
        if b"\r" in data:
            return None
        end = data.rfind(b"\n\n") + 2  # 1: no whole event in the chunk
        if end == len(data) and end > 1:  # the usual read: it ends with an event
            head, rest = data, b""
        else:
            head, rest = (data[:end], data[end:]) if end > 1 else (b"", data)
            # What follows the last blank line must be the start of a plain event: one
            # `data:` line (its LF may have come), short enough to be re-joined later.
            if len(rest) > _TAIL_MAX or not b"data:".startswith(rest[:5]) or b"\n" in rest[:-1]:
                return None
        datas: list[str] = []
        if head:
            # One decode and one split for the lot (UTF-8 is context-free at the LFs).
            parts = head.decode("utf-8", "replace").split("\n\n")
            parts.pop()  # the nothing after the last blank line
            for part in parts:
                if not part.startswith("data:") or "\n" in part:
                    return None
                datas.append(part[6:] if part.startswith("data: ") else part[5:])
        self._tail = rest
        return datas

    def _park(self) -> bool:
        """After the general path: when all that is pending is the start of a plain event
        (a read ended inside one), hold it as bytes and be idle again, so the next reads
        take the fast path (else one cut event would keep the whole stream off it)."""
        if (
            self._at_start
            or self._skip_lf
            or self._has_data
            or self._fields
            or self._event
            or self._raw is not None
        ):
            return False
        partial = self._partial + "".join(self._held) if self._held else self._partial
        if not partial or len(partial) > _TAIL_MAX or not "data:".startswith(partial[:5]):
            return False
        # Re-encoded: the decoder replaced what was invalid, and U+FFFD decodes to itself.
        self._tail = partial.encode() + self._utf8.getstate()[0]
        self._utf8.reset()
        self._partial, self._held = "", []
        return True

    def _is_idle(self) -> bool:
        return not (
            self._at_start
            or self._skip_lf
            or self._partial
            or self._held
            or self._has_data
            or self._fields
            or self._event
            or self._raw is not None
        )

    def end(self) -> list[SseItem]:
        """Flush at EOF: the last line, a pending event, an unfinished raw JSON value."""
        tail, self._tail = self._tail, b""
        items = self._feed_text(self._utf8.decode(tail, final=True))
        if self._held:
            self._partial += "".join(self._held)
            self._held = []
        if self._partial:
            line, self._partial = self._partial, ""
            self._line(line, items)
        if self._raw is not None:
            items.append(raw_json("".join(self._raw), complete=False))
            self._raw = None
        if self._has_data or self._fields:
            items.append(self._dispatch(terminated=False))
        self._reset_event()
        self._idle = False  # nothing follows EOF; keep every later call on the general path
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
        if "\n" not in text and "\r" not in text:
            self._held.append(text)  # no line ends here: nothing to scan yet
            return []
        if self._held:
            buffer = self._partial + "".join(self._held) + text
            self._held = []
        else:
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
            self._raw_balance = JsonBalance()
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
        items.append(raw_json("".join(self._raw), complete=True))
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
