"""A message holding a big string is encoded in pieces that join to its line (PERF-BIG-004).

Sans-IO: `encode_pieces` yields the bytes of one NDJSON line a slice at a time; joined, they
are what `encode` gives (a lone surrogate aside, escaped in place), each piece is bounded,
and encoding them holds a fraction of the line, never the line (tracemalloc, structural).
"""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_bridge.wire import (
    BIG_STRING_CHARS,
    PIECE_CHARS,
    NdjsonDecoder,
    encode,
    encode_pieces,
    streamable,
)
from acp_bridge.wire._pieces import MAX_DEPTH

BIG = 'line of ordinary text, "quoted", tab\t, é, 😀, \\ and a newline\n' * 40_000


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def _message(text: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "s-1",
            "update": {
                "sessionUpdate": "tool_call",
                "content": [
                    {"type": "diff", "path": "/w/big.txt", "oldText": text, "newText": text + "x"}
                ],
                "locations": [],
                "rawInput": {},
            },
        },
    }


@pytest.mark.requirement("PERF-BIG-004")
def test_the_pieces_join_to_the_line_encode_gives() -> None:
    message = _message(BIG)
    assert streamable(message)
    pieces = list(encode_pieces(message))
    assert len(pieces) > 10
    assert b"".join(pieces) == encode(message)
    assert all(b"\n" not in piece for piece in pieces[:-1])
    assert pieces[-1].endswith(b"\n")
    # A piece: about PIECE_CHARS characters, up to 4 UTF-8 bytes each, plus what joins them.
    assert max(len(piece) for piece in pieces) <= 2 * 4 * PIECE_CHARS
    (frame,) = NdjsonDecoder(1 << 30).feed(b"".join(pieces))
    assert frame.value == message  # type: ignore[union-attr]


@pytest.mark.requirement("PERF-BIG-004")
def test_escapes_never_split_across_pieces() -> None:
    text = '\x00\x1f"\\' * (PIECE_CHARS // 2)  # every character escaped, up to 6 bytes
    message = {"text": text, "list": [text, 1, None, True, 2.5, {}, []]}
    joined = b"".join(encode_pieces(message))
    assert joined == encode(message)
    assert json.loads(joined) == message


@pytest.mark.requirement("PERF-BIG-004")
def test_a_lone_surrogate_is_escaped_in_place() -> None:
    message = {"text": "a" * BIG_STRING_CHARS + "\ud800" + "b"}
    joined = b"".join(encode_pieces(message))
    joined.decode("utf-8")  # valid UTF-8
    assert json.loads(joined) == message


@pytest.mark.requirement("PERF-BIG-004")
@pytest.mark.parametrize(
    "value",
    [
        {"small": "text"},
        {"big": "x" * (BIG_STRING_CHARS + 1), "bad": float("nan")},
        {"big": "x" * (BIG_STRING_CHARS + 1), 1: "key not a string"},
        {"big": "x" * (BIG_STRING_CHARS + 1), "odd": object()},
        {"big": "x" * (BIG_STRING_CHARS + 1), "deep": _nested(MAX_DEPTH + 1)},
    ],
)
def test_only_what_cannot_fail_is_written_in_pieces(value: Any) -> None:
    assert not streamable(value)  # encoded whole: an error is raised before a byte is written


@pytest.mark.requirement("PERF-BIG-004")
@settings(max_examples=40)
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=20),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=12,
    ),
    st.text(min_size=1, max_size=30),
)
def test_any_json_value_around_a_big_string_round_trips(value: Any, unit: str) -> None:
    big = unit * (BIG_STRING_CHARS // len(unit) + 1)
    message = {"around": value, "big": big, "list": [value, big]}
    assert streamable(message)
    joined = b"".join(encode_pieces(message))
    assert json.loads(joined) == message
    assert joined.endswith(b"\n")


@pytest.mark.requirement("PERF-BIG-004")
def test_encoding_in_pieces_never_holds_the_line() -> None:
    text = "ordinary ascii source text\n" * 300_000  # 8.1 MB
    message = _message(text)
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        written = sum(len(piece) for piece in encode_pieces(message))
        pieces_peak = tracemalloc.get_traced_memory()[1] - start
        tracemalloc.reset_peak()
        whole = len(encode(message))
        whole_peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        if not was_tracing:
            tracemalloc.stop()
    assert written == whole
    # A few pieces' worth (a slice, its escaped form, the joined piece, its bytes), whatever
    # the line's size; here a sixth of it.
    assert pieces_peak <= 10 * PIECE_CHARS, f"pieces peak {pieces_peak / whole:.2f}x the line"
    assert whole_peak >= 1.0 * whole  # what it replaces: at least the line itself
