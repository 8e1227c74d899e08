"""The per-chunk fast paths give exactly what the general paths give (THRU-001): a chunk that
is one plain SSE event goes to the provider's decoder as its data string, and its events are
those of the full SseEvent path, for every provider and any chunking of the stream."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_bridge.providers import ModelStreamError
from acp_bridge.providers.http import SseDecoder, SseEvent
from acp_bridge.providers.http._anthropic_stream import AnthropicStreamDecoder
from acp_bridge.providers.http._gemini_stream import GeminiStreamDecoder
from acp_bridge.providers.http._openai_stream import OpenAIStreamDecoder

pytestmark = pytest.mark.requirement("THRU-001")

_texts = st.text(max_size=12)
_openai_chunks = st.one_of(
    st.builds(
        lambda t: {"id": "c", "model": "m", "choices": [{"index": 0, "delta": {"content": t}}]},
        _texts,
    ),
    st.builds(
        lambda t: {"choices": [{"index": 0, "delta": {"role": "assistant", "content": t}}]}, _texts
    ),
    st.builds(
        lambda r: {"choices": [{"index": 0, "delta": {}, "finish_reason": r}]},
        st.sampled_from(["stop", "length", "tool_calls"]),
    ),
    st.just({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2}}),
    st.builds(lambda t: {"choices": [{"index": 0, "delta": {"reasoning_content": t}}]}, _texts),
    st.builds(
        lambda a: {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {"index": 0, "id": "t1", "function": {"name": "f", "arguments": a}}
                        ]
                    },
                }
            ]
        },
        st.sampled_from(["", "{", '{"a":1}']),
    ),
    st.just({"error": {"message": "overloaded", "type": "server_error"}}),
    st.just({"object": "error", "message": "bad"}),
)
_datas = st.one_of(
    _openai_chunks.map(lambda c: json.dumps(c, ensure_ascii=False)),
    st.sampled_from(["[DONE]", "", " {}", "{} ", "not json", "[1, 2]", "{"]),
)


def _outcome(decoder: Any, feed: Any) -> Any:
    try:
        return ("events", feed(decoder))
    except ModelStreamError as error:
        return ("error", error.kind, error.message)


def _decoders() -> list[Any]:
    return [
        lambda: OpenAIStreamDecoder(model="m"),
        lambda: AnthropicStreamDecoder(model="m"),
        lambda: GeminiStreamDecoder(model="m"),
    ]


@given(st.lists(_datas, max_size=8))
def test_feed_data_equals_feeding_the_event(datas: list[str]) -> None:
    for make in _decoders():
        fast, slow = make(), make()
        for data in datas:
            got = _outcome(fast, lambda d, data=data: d.feed_data(data))
            want = _outcome(slow, lambda d, data=data: d.feed(SseEvent(data)))
            assert got == want, data
            if got[0] == "error":
                break
            assert fast.done == slow.done


_lines = st.one_of(
    _datas.filter(lambda d: "\n" not in d and "\r" not in d).map(lambda d: f"data: {d}\n\n"),
    st.sampled_from(
        [
            ": ping\n\n",
            "event: message\ndata: {}\n\n",
            "data:{}\n\n",
            "data: a\r\n\r\n",
            "id: 7\n",
            "data: x\ndata: y\n\n",
        ]
    ),
)


@given(st.lists(_lines, max_size=10), st.lists(st.integers(1, 40), max_size=10), st.booleans())
def test_plain_chunks_decode_as_the_general_path_does(
    lines: list[str], cuts: list[int], bom: bool
) -> None:
    body = ("\ufeff" if bom else "") + "".join(lines)
    raw = body.encode()
    # Chunks as a server writes them: whole events mostly, split anywhere sometimes.
    chunks: list[bytes] = [line.encode() for line in lines]
    if cuts:
        chunks, position = [], 0
        for cut in cuts:
            chunks.append(raw[position : position + cut])
            position += cut
        chunks.append(raw[position:])
    elif bom and chunks:
        chunks[0] = "\ufeff".encode() + chunks[0]
    fast = SseDecoder()
    fast_data: list[str] = []
    for chunk in chunks:
        data = fast.plain(chunk)
        if data is not None:
            fast_data.append(data)
        else:
            fast_data += [i.data for i in fast.feed(chunk) if isinstance(i, SseEvent)]
    fast_data += [i.data for i in fast.end() if isinstance(i, SseEvent)]
    assert fast_data == [i.data for i in _reference(raw) if isinstance(i, SseEvent)]


def _reference(body: bytes) -> list[Any]:
    """The general path's items for a whole body: fed as one text, no fast path taken."""
    reference = SseDecoder()
    return reference.feed(body.decode("utf-8", "replace")) + reference.end()


_events = st.one_of(
    _datas.filter(lambda d: "\n" not in d and "\r" not in d).map(lambda d: f"data: {d}\n\n"),
    _datas.filter(lambda d: "\n" not in d and "\r" not in d).map(lambda d: f"data:{d}\n\n"),
    st.sampled_from(
        [
            ": ping\n\n",
            "event: error\ndata: {}\n\n",
            "data: a\r\n\r\n",
            "id: 7\n",
            "retry: 30\n",
            "data: x\ndata: y\n\n",
            "\n",
            "data: caf\xe9\n\n",
            '{"error": {"code": 500}}\n',
        ]
    ),
)


@pytest.mark.requirement("CHUNK-002")
@given(
    st.lists(_events, max_size=14),
    st.lists(st.integers(1, 90), max_size=8),
    st.booleans(),
    st.booleans(),
)
def test_many_events_per_read_decode_as_the_general_path_does(
    events: list[str], cuts: list[int], bom: bool, by_data: bool
) -> None:
    """One read carrying many events, cut anywhere (inside an event, inside a character):
    `feed`, and `plain_events` then `feed`, give the general path's items, in order."""
    raw = ("\ufeff" if bom else "").encode() + "".join(events).encode()
    chunks, position = [], 0
    for cut in cuts:
        chunks.append(raw[position : position + cut])
        position += cut
    chunks.append(raw[position:])
    decoder = SseDecoder()
    got: list[Any] = []
    for chunk in chunks:
        datas = decoder.plain_events(chunk) if by_data else None
        if datas is not None:
            got += [SseEvent(d, id=decoder.last_event_id, retry=decoder.retry) for d in datas]
        else:
            got += decoder.feed(chunk)
    got += decoder.end()
    assert got == _reference(raw)


@pytest.mark.requirement("CHUNK-002")
def test_a_read_of_plain_events_is_split_once_and_its_cut_event_held() -> None:
    events = [f'data: {{"n": {n}}}\n\n'.encode() for n in range(40)]
    body = b"".join(events)
    cut = len(body) - 7  # inside the last event
    decoder = SseDecoder()
    assert decoder.feed(b"data: first\n\n") == [SseEvent("first")]  # the stream's start
    assert decoder.plain_events(body[:cut]) == [f'{{"n": {n}}}' for n in range(39)]
    assert decoder.plain_events(body[cut:]) == ['{"n": 39}']
    assert decoder.plain_events(b"data: 1\ndata: 2\n\n") is None  # not plain: nothing taken
    assert decoder.feed(b"data: 1\ndata: 2\n\n") == [SseEvent("1\n2")]
    big = b"data: " + b"x" * (100 * 1024)  # an event longer than the fast path holds
    assert decoder.plain_events(big) is None
    assert decoder.feed(big) == []
    assert decoder.feed(b"\n\n") == [SseEvent("x" * (100 * 1024))]
    assert decoder.end() == []


@pytest.mark.requirement("CHUNK-002")
def test_invalid_utf8_and_split_characters_decode_as_the_general_path_does() -> None:
    raw = b"data: a\xff\xfeb\n\ndata: \xe2\x82\n\ndata: caf\xc3\xa9 \xf0\x9f\x98\x80\n\ndata: \xc3"
    for cut in range(len(raw) + 1):
        for second in range(cut, len(raw) + 1):
            decoder = SseDecoder()
            got = decoder.feed(b"data: start\n\n")
            for chunk in (raw[:cut], raw[cut:second], raw[second:]):
                got += decoder.feed(chunk)
            got += decoder.end()
            assert got == _reference(b"data: start\n\n" + raw), (cut, second)
