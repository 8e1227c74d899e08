"""Sans-IO NDJSON framing: bytes in, frames out; one JSON value out, one line of bytes out.

ACP v1 frames are UTF-8 JSON texts delimited by ``\\n`` that never contain a raw newline
(transports.mdx). The decoder never raises: a line that is too long, not UTF-8 or not JSON
becomes a `BadFrame` the connection answers with -32700, and decoding goes on with the next
line. "Not JSON" includes what Python's `json` would otherwise let through: the `NaN`,
`Infinity` and `-Infinity` tokens, numbers that overflow a float, integers longer than
Python's int-conversion limit, and nesting deeper than the interpreter can decode
(ROBUST-WIRE-001); nothing non-JSON ever reaches the layers above. Sizes are measured in
bytes. Memory stays bounded by the line limit: an oversize line is dropped as it streams in,
not buffered.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from typing import Final, TypeAlias

from acp_bridge._json import JsonValue

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "BadFrame",
    "Decoded",
    "Frame",
    "NdjsonDecoder",
    "encode",
    "loads",
]

DEFAULT_MAX_LINE_BYTES: Final = 50 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Frame:
    """One decoded JSON value (any JSON type; the JSON-RPC layer judges its shape)."""

    value: JsonValue


@dataclass(frozen=True, slots=True)
class BadFrame:
    """A line that could not become JSON. `reason` is safe to show the peer."""

    reason: str


Decoded: TypeAlias = Frame | BadFrame


class NdjsonDecoder:
    """Splits a byte stream into JSON frames.

    Blank lines are skipped, a trailing ``\\r`` is tolerated, and a final line without its
    newline is decoded by `close()`.
    """

    __slots__ = ("_buffer", "_discarding", "_max_line_bytes", "_scan_from")

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be positive")
        self._max_line_bytes = max_line_bytes
        self._buffer = bytearray()
        self._scan_from = 0
        self._discarding = False

    @property
    def max_line_bytes(self) -> int:
        return self._max_line_bytes

    def feed(self, data: bytes) -> list[Decoded]:
        """Adds bytes and returns every frame they completed, in order."""
        out: list[Decoded] = []
        buffer = self._buffer
        buffer += data
        start = 0
        while True:
            newline = buffer.find(b"\n", max(start, self._scan_from))
            if newline < 0:
                break
            if self._discarding:
                self._discarding = False
            else:
                self._decode_line(buffer, start, newline, out)
            start = newline + 1
            self._scan_from = start
        if start:
            del buffer[:start]
        self._scan_from = len(buffer)
        if len(buffer) > self._max_line_bytes:
            # The current line is already too long: answer once, then drop the rest of it
            # as it arrives, so a hostile peer cannot grow our memory past the limit.
            if not self._discarding:
                out.append(self._oversize())
                self._discarding = True
            buffer.clear()
            self._scan_from = 0
        return out

    def close(self) -> list[Decoded]:
        """End of input: decodes a last line that had no newline."""
        out: list[Decoded] = []
        if self._buffer and not self._discarding:
            self._decode_line(self._buffer, 0, len(self._buffer), out)
        self._buffer.clear()
        self._scan_from = 0
        self._discarding = False
        return out

    def _oversize(self) -> BadFrame:
        return BadFrame(f"message exceeds the line limit of {self._max_line_bytes} bytes")

    def _decode_line(self, buffer: bytearray, start: int, end: int, out: list[Decoded]) -> None:
        if end > start and buffer[end - 1] == 0x0D:  # tolerate CRLF
            end -= 1
        if end - start > self._max_line_bytes:
            out.append(self._oversize())
            return
        line = bytes(buffer[start:end])
        if not line.strip():
            return
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            out.append(BadFrame(f"message is not valid UTF-8 (byte {exc.start})"))
            return
        try:
            value = loads(text)
        except ValueError as exc:
            out.append(BadFrame(f"message is not valid JSON: {exc}"))
            return
        out.append(Frame(value))


class _NotJson(ValueError):
    """A token Python's `json` would accept that JSON (RFC 8259) does not have."""


def _reject_constant(token: str) -> object:
    raise _NotJson(f"{token} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotJson("a number is out of range")
    return value


_decoder = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


def loads(text: str) -> JsonValue:
    """Strict JSON: raises `ValueError`, with a reason safe to show, for anything that is not
    (also for nesting deeper than the interpreter can decode)."""
    try:
        value: JsonValue = _decoder.decode(text)
    except _NotJson:
        raise
    except json.JSONDecodeError as exc:
        raise ValueError(f"{exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise ValueError("it is nested too deeply") from None
    except ValueError:
        # CPython's int-conversion limit (sys.get_int_max_str_digits(), 4300 by default).
        limit = sys.get_int_max_str_digits()
        raise ValueError(f"an integer has more than {limit} digits") from None
    return value


_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_ascii_encoder = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def encode(value: JsonValue) -> bytes:
    """One compact JSON line, UTF-8, terminated by ``\\n``.

    JSON escapes control characters, so the text never holds a raw newline. Strings with
    lone surrogates (legal in Python, not in UTF-8) fall back to ASCII escapes.
    """
    text = _encoder.encode(value)
    text += "\n"  # in place (one reference): a 20 MB line is not copied once more as bytes
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return (_ascii_encoder.encode(value) + "\n").encode("ascii")
