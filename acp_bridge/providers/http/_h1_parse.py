"""A sans-IO HTTP/1.1 response parser: the head, then the body's framing (spec/http1.md).

`ResponseParser` is fed the bytes of one response as they arrive (no I/O, no event loop):
`head(data)` buffers until the status line and headers are complete (skipping 1xx interim
responses) and returns a `ResponseHead`; `body(data)` returns the decoded body bytes that
`data` completed, ALL of them as one bytes object (a socket read carrying dozens of chunks
costs one join, not an event per chunk); `eof()` says the peer closed. Framing (RFC 9112 §6):
no body (204, 304), `Transfer-Encoding: chunked` (extensions ignored, trailers read and
dropped), `Content-Length`, else the body ends when the connection closes.

Strict and bounded: a malformed status line, header, chunk size or chunk end, a head over
`max_head` bytes, a chunk-size line or trailer section over its cap, conflicting lengths, a
transfer coding other than chunked, and a body cut short all raise
`httpx.RemoteProtocolError` naming what was wrong (the transport adds the request).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

import httpx

__all__ = ["Framing", "ResponseHead", "ResponseParser"]

MAX_HEAD = 64 * 1024
MAX_CHUNK_LINE = 4 * 1024
MAX_TRAILERS = 16 * 1024

_HEAD_END = re.compile(rb"\r?\n\r?\n")
_LINE_END = re.compile(rb"\r?\n")
_STATUS_LINE = re.compile(rb"HTTP/1\.([01]) ([0-9]{3})(?: ([^\x00-\x08\x0a-\x1f\x7f]*))?")
_HEADER = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*([^\x00-\x08\x0a-\x1f\x7f]*?)[ \t]*")
# chunk-size [ chunk-ext ]: the size in hex, then anything printable after a `;`.
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\x00-\x08\x0a-\x1f\x7f]*)?")


class Framing(Enum):
    """How the end of a response body is found."""

    NONE = "none"
    LENGTH = "content-length"
    CHUNKED = "chunked"
    CLOSE = "close-delimited"


@dataclass(frozen=True, slots=True)
class ResponseHead:
    """A final response's status line and headers, as received (names lower-cased)."""

    status: int
    reason: bytes
    http_version: bytes
    headers: list[tuple[bytes, bytes]]
    framing: Framing
    length: int  # the Content-Length (LENGTH framing only), else -1
    keep_alive: bool  # the server did not ask to close (HTTP/1.1 without `Connection: close`)


def _fail(message: str) -> httpx.RemoteProtocolError:
    return httpx.RemoteProtocolError(message)


class ResponseParser:
    """The parser of ONE response to a request with a body-bearing method (see module doc)."""

    def __init__(
        self,
        *,
        max_head: int = MAX_HEAD,
        max_chunk_line: int = MAX_CHUNK_LINE,
        max_trailers: int = MAX_TRAILERS,
    ) -> None:
        self._max_head = max_head
        self._max_chunk_line = max_chunk_line
        self._max_trailers = max_trailers
        self._buffer = b""
        self._framing = Framing.NONE
        self._remaining = 0  # LENGTH: body bytes left; CHUNKED: bytes left of this chunk
        self._in_chunk = False  # CHUNKED: inside a chunk's data (or its CRLF, remaining 0)
        self._in_trailers = False
        self._trailer_bytes = 0
        self.complete = False  # the whole body has been decoded
        self.extra = False  # bytes followed the body: the connection cannot be reused

    # -- the head --------------------------------------------------------------------
    def head(self, data: bytes) -> ResponseHead | None:
        """The final response head once `data` completes it, else None (all buffered)."""
        buffer = self._buffer + data if self._buffer else data
        while True:
            match = _HEAD_END.search(buffer)
            if match is None:
                if len(buffer) > self._max_head:
                    raise _fail(f"the response head is larger than {self._max_head} bytes")
                self._buffer = buffer
                return None
            if match.start() > self._max_head:
                raise _fail(f"the response head is larger than {self._max_head} bytes")
            head = _parse_head(buffer[: match.start()])
            buffer = buffer[match.end() :]
            if 100 <= head.status < 200:
                if head.status == 101:
                    raise _fail("the server switched protocols (101), which was not asked for")
                continue  # an interim response (100 Continue, 103 Early Hints): skip it
            self._start_body(head)
            self._buffer = buffer
            return head

    def _start_body(self, head: ResponseHead) -> None:
        self._framing = head.framing
        if head.framing is Framing.NONE or (head.framing is Framing.LENGTH and not head.length):
            self.complete = True
        self._remaining = head.length

    # -- the body --------------------------------------------------------------------
    def pending(self) -> bytes:
        """The decoded body bytes that arrived with the head (call once, after `head`)."""
        buffer, self._buffer = self._buffer, b""
        return self.body(buffer) if buffer else b""

    def body(self, data: bytes) -> bytes:
        """The body bytes `data` (the next bytes received) decodes to; b"" if none yet."""
        if self.complete:
            if data:
                self.extra = True
            return b""
        framing = self._framing
        if framing is Framing.CHUNKED:
            return self._chunked(self._buffer + data if self._buffer else data)
        if framing is Framing.LENGTH:
            if len(data) < self._remaining:
                self._remaining -= len(data)
                return data
            body = data[: self._remaining]
            self.extra = len(data) > self._remaining
            self._remaining = 0
            self.complete = True
            return body
        return data  # CLOSE: everything until EOF

    def eof(self) -> None:
        """The peer closed the connection: completes a close-delimited body, else raises
        if the body is unfinished."""
        if self.complete:
            return
        if self._framing is Framing.CLOSE:
            self.complete = True
            return
        if self._framing is Framing.LENGTH:
            raise _fail(
                "peer closed connection without sending complete message body: "
                f"{self._remaining} of the Content-Length bytes missing"
            )
        raise _fail(
            "peer closed connection without sending complete message body: incomplete chunked read"
        )

    def _chunked(self, data: bytes) -> bytes:
        out: list[bytes] = []
        position = 0
        size = len(data)
        while position < size:
            if self._in_chunk:
                remaining = self._remaining
                if remaining:
                    end = position + remaining
                    if end > size:  # the chunk continues in a later read
                        out.append(data[position:])
                        self._remaining = end - size
                        position = size
                        break
                    out.append(data[position:end])
                    position = end
                    self._remaining = 0
                if size - position < 2:  # its CRLF not all here yet
                    break
                if not data.startswith(b"\r\n", position):
                    raise _fail("a chunk's data is not followed by CRLF (a wrong chunk size)")
                position += 2
                self._in_chunk = False
                continue
            if self._in_trailers:
                position = self._trailers(data, position)
                if self.complete:
                    self.extra = position < size
                    position = size
                break
            end = data.find(b"\r\n", position)
            if end < 0:
                if size - position > self._max_chunk_line:
                    raise _fail(f"a chunk-size line is longer than {self._max_chunk_line} bytes")
                break
            if end - position > self._max_chunk_line:
                raise _fail(f"a chunk-size line is longer than {self._max_chunk_line} bytes")
            match = _CHUNK_SIZE.fullmatch(data, position, end)
            if match is None:
                line = data[position:end][:40]
                raise _fail(f"malformed chunk-size line {line!r} (expected hex digits)")
            position = end + 2
            chunk_size = int(match.group(1), 16)
            if chunk_size:
                self._in_chunk = True
                self._remaining = chunk_size
            else:
                self._in_trailers = True
        self._buffer = data[position:] if position < size else b""
        if not out:
            return b""
        return out[0] if len(out) == 1 else b"".join(out)

    def _trailers(self, data: bytes, position: int) -> int:
        """Reads trailer lines from `position` (dropped, but validated and capped); returns
        where reading stopped (the end of the section once `complete`)."""
        while True:
            match = _LINE_END.search(data, position)
            if match is None:
                if self._trailer_bytes + len(data) - position > self._max_trailers:
                    raise _fail(f"the trailer section is larger than {self._max_trailers} bytes")
                return position
            self._trailer_bytes += match.end() - position
            if self._trailer_bytes > self._max_trailers:
                raise _fail(f"the trailer section is larger than {self._max_trailers} bytes")
            if match.start() == position:
                self.complete = True
                return match.end()
            if _HEADER.fullmatch(data, position, match.start()) is None:
                raise _fail(f"malformed trailer line {data[position : match.start()][:40]!r}")
            position = match.end()


def _parse_head(head: bytes) -> ResponseHead:
    lines = _LINE_END.split(head)
    status_line = _STATUS_LINE.fullmatch(lines[0])
    if status_line is None:
        raise _fail(f"malformed status line {lines[0][:60]!r} (expected HTTP/1.x and a status)")
    minor, code, reason = status_line.groups()
    headers: list[tuple[bytes, bytes]] = []
    for line in lines[1:]:
        header = _HEADER.fullmatch(line)
        if header is None:
            raise _fail(f"malformed header line {line[:60]!r}")
        headers.append((header.group(1).lower(), header.group(2)))
    status = int(code)
    framing, length = _framing(status, headers)
    tokens = {
        token.strip().lower()
        for name, value in headers
        if name == b"connection"
        for token in value.split(b",")
    }
    # A chunked response that also has a Content-Length is suspect (RFC 9112 §6.3): not reused.
    smuggled = framing is Framing.CHUNKED and any(name == b"content-length" for name, _ in headers)
    keep_alive = (
        minor == b"1" and b"close" not in tokens and framing is not Framing.CLOSE and not smuggled
    )
    return ResponseHead(
        status=status,
        reason=reason or b"",
        http_version=b"HTTP/1." + minor,
        headers=headers,
        framing=framing,
        length=length,
        keep_alive=keep_alive,
    )


def _framing(status: int, headers: list[tuple[bytes, bytes]]) -> tuple[Framing, int]:
    if status in (204, 304) or status < 200:
        return Framing.NONE, -1
    codings = [
        coding.strip().lower()
        for name, value in headers
        if name == b"transfer-encoding"
        for coding in value.split(b",")
    ]
    if codings:
        if codings != [b"chunked"]:
            shown = b", ".join(codings).decode("latin-1")
            raise _fail(f"unsupported Transfer-Encoding {shown!r} (only chunked is)")
        return Framing.CHUNKED, -1  # it overrides any Content-Length (RFC 9112 §6.3)
    lengths = {
        value.strip()
        for name, values in headers
        if name == b"content-length"
        for value in values.split(b",")
    }
    if not lengths:
        return Framing.CLOSE, -1
    if len(lengths) > 1:
        raise _fail("conflicting Content-Length values")
    (length,) = lengths
    if not length.isdigit() or len(length) > 18:
        raise _fail(f"malformed Content-Length {length[:30]!r}")
    return Framing.LENGTH, int(length)
