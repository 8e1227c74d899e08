"""The sink's hot path: chunk params built directly equal the pydantic path; merging is exact."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from json.encoder import encode_basestring
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_bridge import protocol as acp
from acp_bridge.agent._chunks import ChunkBuffer, chunk_params, chunk_template
from acp_bridge.agent._sink import PeerTurnSink
from acp_bridge.agent._translate import update_model
from acp_bridge.errors import PeerGone
from acp_bridge.turn import AgentText, AgentThought, ResetMarker
from acp_bridge.wire import encode

pytestmark = pytest.mark.requirement("AGENT-ORDER-001")

chunks = st.one_of(
    st.builds(
        AgentText,
        text=st.text(),
        message_id=st.sampled_from(["m1", "m2"]),
        reset=st.one_of(
            st.none(), st.builds(ResetMarker, attempt=st.integers(2, 9), reason=st.text(min_size=1))
        ),
    ),
    st.builds(AgentThought, text=st.text(), message_id=st.sampled_from(["m1", "t1"])),
)


@given(chunks)
def test_direct_chunk_params_equal_the_model_path(chunk: AgentText | AgentThought) -> None:
    slow = acp.to_wire(acp.SessionNotification(session_id="s", update=update_model(chunk)))
    assert chunk_params("s", chunk) == slow


@pytest.mark.requirement("THRU-001")
@given(chunks.filter(lambda c: not (isinstance(c, AgentText) and c.reset)), st.text())
def test_a_chunk_template_line_equals_the_encoded_notification(
    chunk: AgentText | AgentThought, session_id: str
) -> None:
    before, after = chunk_template(session_id, chunk)
    line = before + encode_basestring(chunk.text) + after
    params = chunk_params(session_id, chunk)
    expected = encode({"jsonrpc": "2.0", "method": "session/update", "params": params})
    try:
        data = line.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: the sink takes the general encoder
        assert expected.isascii()  # which escapes it (ASCII fallback)
    else:
        assert data == expected


@given(st.lists(chunks.filter(lambda c: not (isinstance(c, AgentText) and c.reset)), max_size=30))
def test_merging_keeps_every_character_in_order_per_message(
    items: list[AgentText | AgentThought],
) -> None:
    buffer = ChunkBuffer()
    for item in items:
        buffer.add(item)
    merged = buffer.take()
    assert not buffer
    assert "".join(c.text for c in merged) == "".join(c.text for c in items)
    # Neighbours never share kind and message: each merged chunk is a maximal run.
    for left, right in itertools.pairwise(merged):
        assert (type(left), left.message_id) != (type(right), right.message_id)
    assert len(merged) <= len(items)


class _GonePeer:
    """A peer whose editor went away after the first line."""

    def __init__(self) -> None:
        self.lines: list[object] = []

    async def notify(self, method: str, params: object) -> None:
        if self.lines:
            raise PeerGone()
        self.lines.append(params)

    async def notify_encoded(self, line: bytes, message: Callable[[], dict[str, Any]]) -> None:
        built = message()
        assert encode(built) == line
        await self.notify(built["method"], built["params"])

    async def notify_lines(self, lines: list[bytes]) -> None:
        for line in lines:
            built = json.loads(line)
            await self.notify(built["method"], built["params"])


@pytest.mark.anyio
async def test_a_writer_that_lost_the_editor_fails_fast_instead_of_hanging() -> None:
    peer = _GonePeer()
    sink = PeerTurnSink(peer, "s")  # type: ignore[arg-type]

    async def turn() -> None:
        async with sink.running():
            await sink.send_update(AgentText("one", "m1"))
            await sink.flush()
            await sink.send_update(AgentText("two", "m1"))
            await sink.flush()

    with anyio.fail_after(2), pytest.raises(PeerGone):
        await turn()
    assert len(peer.lines) == 1
