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
    fast, slow = SseDecoder(), SseDecoder()
    fast_data: list[str] = []
    slow_data: list[str] = []
    for chunk in chunks:
        data = fast.plain(chunk)
        if data is not None:
            fast_data.append(data)
        else:
            fast_data += [i.data for i in fast.feed(chunk) if isinstance(i, SseEvent)]
        slow_data += [i.data for i in slow.feed(chunk) if isinstance(i, SseEvent)]
    fast_data += [i.data for i in fast.end() if isinstance(i, SseEvent)]
    slow_data += [i.data for i in slow.end() if isinstance(i, SseEvent)]
    assert fast_data == slow_data
