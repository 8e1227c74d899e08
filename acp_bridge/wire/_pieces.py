"""Sans-IO encoding of a big JSON value as one line in pieces, never the whole line at once.

`encode` builds a message's whole text, then its UTF-8 bytes: for a 10 MB diff (old and new
text) that is the escaped pieces, the joined 20 MB text and its 20 MB of bytes alive together
(issue 15 item 5). `encode_pieces` yields the same line as a run of byte pieces of about
`PIECE_CHARS` characters each instead: the message's structure is encoded around its big
strings, and each big string is escaped a slice at a time. Joined, the pieces are exactly
`encode(value)`, except that a lone surrogate is written as its ``\\uXXXX`` escape in place
rather than the whole line falling back to ASCII escapes (both decode to the same value).

`streamable` says when a value is worth it and safe: it holds a string longer than
`BIG_STRING_CHARS`, and nothing the encoder could refuse (a non-finite float, a key that is
not a string, a type that is not JSON, nesting deeper than `MAX_DEPTH`), since an error
after the first piece was written would leave half a line on the wire. Anything else is
encoded whole by `encode`, which raises before anything is written.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from json.encoder import encode_basestring
from typing import Final

from acp_bridge._json import JsonValue
from acp_bridge.wire._framing import _encoder

__all__ = ["BIG_STRING_CHARS", "MAX_DEPTH", "PIECE_CHARS", "encode_pieces", "streamable"]

BIG_STRING_CHARS: Final = 64 * 1024
"""A message holding a string longer than this is written in pieces."""

PIECE_CHARS: Final = 256 * 1024
"""About how many characters each piece holds (a big string's slice, plus what joins it)."""

MAX_DEPTH: Final = 64
"""Deeper values (a cycle included) are left to `encode`, which judges them."""

_BIG: Final = 1
_PLAIN: Final = 0
_REFUSED: Final = -1


def _scan(value: object, depth: int) -> int:
    """_BIG, _PLAIN, or _REFUSED when `encode` might raise (or the value is too deep)."""
    if isinstance(value, str):
        return _BIG if len(value) > BIG_STRING_CHARS else _PLAIN
    if value is None or isinstance(value, int):  # bool is an int
        return _PLAIN
    if isinstance(value, float):
        return _PLAIN if math.isfinite(value) else _REFUSED
    if depth >= MAX_DEPTH:
        return _REFUSED
    found = _PLAIN
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return _REFUSED
            seen = _scan(item, depth + 1)
            if seen == _REFUSED:
                return _REFUSED
            found |= seen
        return found
    if isinstance(value, list | tuple):
        for item in value:
            seen = _scan(item, depth + 1)
            if seen == _REFUSED:
                return _REFUSED
            found |= seen
        return found
    return _REFUSED


def streamable(value: JsonValue) -> bool:
    """True when `value` holds a big string and `encode_pieces` cannot fail on it."""
    return _scan(value, 0) == _BIG


def _texts(value: object) -> Iterator[str]:
    """The line's text in order: small parts whole, big strings a slice at a time."""
    if isinstance(value, str):
        if len(value) <= BIG_STRING_CHARS:
            yield encode_basestring(value)
            return
        yield '"'
        for start in range(0, len(value), PIECE_CHARS):
            yield encode_basestring(value[start : start + PIECE_CHARS])[1:-1]
        yield '"'
    elif _scan(value, 0) == _PLAIN:
        yield _encoder.encode(value)
    elif isinstance(value, dict):
        separator = "{"
        for key, item in value.items():
            yield separator + encode_basestring(key) + ":"
            yield from _texts(item)
            separator = ","
        yield "}" if value else "{}"
    else:
        assert isinstance(value, list | tuple)
        separator = "["
        for item in value:
            yield separator
            yield from _texts(item)
            separator = ","
        yield "]" if value else "[]"


def encode_pieces(value: JsonValue) -> Iterator[bytes]:
    """The line `encode(value)` would give (newline included), as pieces of about
    `PIECE_CHARS` characters. Call it for a `streamable` value only."""
    parts: list[str] = []
    size = 0
    for text in _texts(value):
        parts.append(text)
        size += len(text)
        if size >= PIECE_CHARS:
            # A lone surrogate becomes its \\uXXXX escape (it is only ever inside a string).
            yield "".join(parts).encode("utf-8", "backslashreplace")
            parts.clear()
            size = 0
    parts.append("\n")
    yield "".join(parts).encode("utf-8", "backslashreplace")
