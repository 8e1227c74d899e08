"""The sans-IO NDJSON decoder and encoder, without an event loop."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_bridge.wire import BadFrame, Frame, NdjsonDecoder, encode

pytestmark = pytest.mark.requirement("WIRE-FRAME-001")


def test_splits_lines_and_skips_blank_ones() -> None:
    decoder = NdjsonDecoder()
    out = decoder.feed(b'{"a":1}\n\n  \n{"b":2}\r\n[1]\n')
    assert out == [Frame({"a": 1}), Frame({"b": 2}), Frame([1])]


def test_frames_survive_arbitrary_chunk_boundaries() -> None:
    decoder = NdjsonDecoder()
    data = b'{"text":"h\xc3\xa9llo"}\n{"x":[1,2]}\n'
    out = []
    for i in range(len(data)):
        out += decoder.feed(data[i : i + 1])
    assert out == [Frame({"text": "héllo"}), Frame({"x": [1, 2]})]


def test_final_line_without_newline_is_decoded_at_close() -> None:
    decoder = NdjsonDecoder()
    assert decoder.feed(b'{"a":1}') == []
    assert decoder.close() == [Frame({"a": 1})]


@pytest.mark.requirement("WIRE-FRAME-002")
def test_oversize_line_is_reported_once_and_decoding_resumes() -> None:
    decoder = NdjsonDecoder(max_line_bytes=16)
    out = decoder.feed(b'{"a":"' + b"x" * 40)
    assert out == [BadFrame("message exceeds the line limit of 16 bytes")]
    assert decoder.feed(b"y" * 1000) == []  # still the same line: no second error, no buffering
    assert decoder.feed(b'"}\n{"ok":1}\n') == [Frame({"ok": 1})]


@pytest.mark.requirement("WIRE-FRAME-002")
def test_line_limit_is_measured_in_bytes_not_characters() -> None:
    line = json.dumps({"t": "é" * 6}, ensure_ascii=False).encode()
    assert (len(line.decode()), len(line)) == (15, 21)
    assert NdjsonDecoder(max_line_bytes=20).feed(line + b"\n") == [
        BadFrame("message exceeds the line limit of 20 bytes")
    ]
    assert NdjsonDecoder(max_line_bytes=21).feed(line + b"\n") == [Frame({"t": "é" * 6})]


@pytest.mark.requirement("WIRE-FRAME-003")
def test_invalid_utf8_and_invalid_json_become_bad_frames() -> None:
    decoder = NdjsonDecoder()
    out = decoder.feed(b'{"a":"\xff"}\n{not json}\n{"ok":true}\n')
    assert out[0] == BadFrame("message is not valid UTF-8 (byte 6)")
    assert isinstance(out[1], BadFrame)
    assert out[1].reason.startswith("message is not valid JSON")
    assert out[2] == Frame({"ok": True})


def test_deep_nesting_is_a_bad_frame_not_a_crash() -> None:
    out = NdjsonDecoder().feed(b"[" * 100_000 + b"]" * 100_000 + b"\n")
    assert out == [BadFrame("message is not valid JSON: it is nested too deeply")]


def test_encode_is_compact_utf8_one_line() -> None:
    data = encode({"text": "a\nb", "é": "\u2028"})
    assert data == '{"text":"a\\nb","é":"\u2028"}\n'.encode()
    assert data.count(b"\n") == 1


def test_encode_escapes_lone_surrogates_instead_of_failing() -> None:
    data = encode({"t": "\ud800"})
    assert data == b'{"t":"\\ud800"}\n'
    data.decode("utf-8")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@given(st.lists(json_values, max_size=8), st.lists(st.integers(1, 50), max_size=20))
def test_any_values_round_trip_through_any_chunking(values: list[object], cuts: list[int]) -> None:
    data = b"".join(encode(v) for v in values)  # type: ignore[arg-type]
    decoder = NdjsonDecoder()
    out = []
    pos = 0
    for cut in cuts:
        out += decoder.feed(data[pos : pos + cut])
        pos += cut
    out += decoder.feed(data[pos:])
    out += decoder.close()
    assert out == [Frame(v) for v in values]  # type: ignore[arg-type]


@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    decoder = NdjsonDecoder(max_line_bytes=64)
    out = decoder.feed(data) + decoder.close()
    assert all(isinstance(item, Frame | BadFrame) for item in out)
