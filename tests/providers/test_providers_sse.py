"""The sans-IO SSE decoder: no event loop, byte streams in, items out."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_bridge.providers.http import RawJson, SseComment, SseDecoder, SseEvent, SseItem


def decode(*chunks: bytes | str) -> list[SseItem]:
    decoder = SseDecoder()
    items: list[SseItem] = []
    for chunk in chunks:
        items.extend(decoder.feed(chunk))
    items.extend(decoder.end())
    return items


def test_events_with_data_and_event_names() -> None:
    items = decode(b'event: message_start\ndata: {"a":1}\n\ndata: x\n\n')
    assert items == [
        SseEvent(data='{"a":1}', event="message_start"),
        SseEvent(data="x"),
    ]


@pytest.mark.requirement("PROV-SSE-001")
def test_final_event_without_blank_line_is_kept_and_marked() -> None:
    assert decode(b"data: one\n\ndata: [DONE]") == [
        SseEvent(data="one"),
        SseEvent(data="[DONE]", terminated=False),
    ]
    assert decode(b"data: [DONE]\n") == [SseEvent(data="[DONE]", terminated=False)]


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending(newline: bytes) -> None:
    stream = newline.join([b"event: e", b"data: a", b"data: b", b"", b"data: c", b"", b""])
    assert decode(stream) == [SseEvent(data="a\nb", event="e"), SseEvent(data="c")]


def test_crlf_split_between_chunks_is_one_line_end() -> None:
    assert decode(b"data: a\r", b"\n\r", b"\ndata: b\r\n\r\n") == [
        SseEvent(data="a"),
        SseEvent(data="b"),
    ]


def test_bom_comments_id_retry_and_field_spacing() -> None:
    items = decode(
        "\ufeff: OPENROUTER PROCESSING\nid: 7\nretry: 1500\ndata:no-space\ndata:  two\n\n".encode()
    )
    assert items == [
        SseComment("OPENROUTER PROCESSING"),
        SseEvent(data="no-space\n two", id="7", retry=1500),
    ]


def test_id_persists_and_bad_retry_is_ignored() -> None:
    decoder = SseDecoder()
    items = decoder.feed(b"id: 1\ndata: a\n\nretry: soon\ndata: b\n\n")
    assert [item.id for item in items if isinstance(item, SseEvent)] == ["1", "1"]
    assert decoder.retry is None
    assert decoder.last_event_id == "1"


def test_blank_line_without_data_dispatches_nothing() -> None:
    assert decode(b"event: ping\n\n\n\ndata:\n\n") == [SseEvent(data="")]


@pytest.mark.requirement("PROV-SSE-002")
def test_non_standard_error_field_is_kept() -> None:
    # llama.cpp before PR #16109: `error:` instead of `data:`.
    items = decode(b'error: {"code":500,"message":"boom"}\n\ndata: [DONE]\n\n')
    assert items == [
        SseEvent(data="", fields={"error": '{"code":500,"message":"boom"}'}),
        SseEvent(data="[DONE]"),
    ]


@pytest.mark.requirement("PROV-SSE-003")
def test_raw_multiline_json_error_after_events() -> None:
    body = (
        b'data: {"candidates":[]}\n\n'
        b"{\n"
        b'  "error": {\n'
        b'    "code": 503,\n'
        b'    "message": "The model is overloaded. {braces} \\" in a string",\n'
        b'    "status": "UNAVAILABLE"\n'
        b"  }\n"
        b"}\n"
    )
    items = decode(body)
    assert items[0] == SseEvent(data='{"candidates":[]}')
    raw = items[1]
    assert isinstance(raw, RawJson)
    assert raw.complete
    assert raw.value == {
        "error": {
            "code": 503,
            "message": 'The model is overloaded. {braces} " in a string',
            "status": "UNAVAILABLE",
        }
    }
    assert len(items) == 2


def test_raw_json_as_the_whole_body_and_as_an_array() -> None:
    assert decode(b'[{"error": {"code": 429}}]') == [
        RawJson(text='[{"error": {"code": 429}}]', value=[{"error": {"code": 429}}])
    ]


def test_truncated_raw_json_is_reported_incomplete() -> None:
    items = decode(b'{\n  "error": {\n    "code": 5')
    assert len(items) == 1
    raw = items[0]
    assert isinstance(raw, RawJson)
    assert raw.value is None
    assert not raw.complete


def test_multibyte_characters_split_across_chunks() -> None:
    data = "data: héllo → 世界\n\n".encode()
    chunks = [data[i : i + 1] for i in range(len(data))]
    assert decode(*chunks) == [SseEvent(data="héllo → 世界")]


# Hypothesis: the same bytes, however they are cut, give the same items.

_text = st.text(
    alphabet=st.characters(codec="utf-8", exclude_characters="\r\n\ufeff"),
    max_size=20,
)
_field = st.one_of(
    st.tuples(st.just("data"), _text),
    st.tuples(st.just("event"), _text.filter(lambda t: not t.startswith(" "))),
    st.tuples(st.just("id"), _text.filter(lambda t: "\0" not in t)),
    st.tuples(st.just("error"), _text),
    st.tuples(st.just(""), _text),  # a comment line
)
_event = st.lists(_field, min_size=1, max_size=4)
_newline = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def _streams(draw: st.DrawFn) -> bytes:
    lines: list[str] = []
    for event in draw(st.lists(_event, max_size=6)):
        for name, value in event:
            lines.append(f":{value}" if name == "" else f"{name}: {value}")
        lines.append("")
    if draw(st.booleans()):
        lines.append('{\n "error": {"code": 503, "message": "x"}\n}')
    text = "".join(line + draw(_newline) for line in lines)
    if draw(st.booleans()):
        text = text.rstrip("\r\n")  # the last event loses its blank line
    return (("\ufeff" if draw(st.booleans()) else "") + text).encode()


@settings(max_examples=300)
@given(data=_streams(), cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12))
def test_any_chunking_gives_the_same_items(data: bytes, cuts: list[int]) -> None:
    whole = decode(data)
    points = sorted({cut for cut in cuts if cut < len(data)})
    chunks = [
        data[start:end] for start, end in zip([0, *points], [*points, len(data)], strict=True)
    ]
    assert decode(*chunks) == whole
