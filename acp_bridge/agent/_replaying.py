"""`session/load`'s replay on the wire: stored turns to JSON-RPC lines, a page at a time.

`replay_session` streams (issue 15.3, PERF-LOAD-001..003): it reads what the stored turns
showed a page at a time (`SessionStore.shown_pages`: the first page small, so the first
update leaves at once; never the conversation) and writes each page's lines before it reads
the next, many lines per write, so memory holds one page whatever the session's length.

Text and thought chunks and plain-text prompt blocks, nearly every line of a replay, are
encoded directly into their line (`ReplayLines`), without a wire model or a params dict;
the other items go through the wire models (`replay_params`). A test holds both ways equal
byte for byte, and every line validates against the ACP schema.
"""

from __future__ import annotations

from json.encoder import encode_basestring

from acp_bridge._json import JsonObject
from acp_bridge.agent._replay import plain_text, replay_params
from acp_bridge.jsonrpc import JsonRpcPeer
from acp_bridge.sessions import PromptShown, ReplayItem, SessionStore, transcript
from acp_bridge.turn import AgentText, AgentThought
from acp_bridge.wire import encode

__all__ = ["WRITE_BYTES", "ReplayLines", "replay_session"]

WRITE_BYTES = 64 * 1024
"""About how much of a replay goes to the transport in one write (a pipe's buffer)."""


class ReplayLines:
    """The `session/update` lines that replay one session's transcript items."""

    __slots__ = ("_compaction", "_head", "_session_id")

    def __init__(self, session_id: str, *, compaction: bool = False) -> None:
        self._session_id = session_id
        self._compaction = compaction
        self._head = (
            '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":'
            + encode_basestring(session_id)
            + ',"update":{"sessionUpdate":"'
        )

    def of(self, item: ReplayItem) -> list[bytes]:
        """The lines of one item, each exactly `encode` of its notification."""
        if isinstance(item, AgentThought):
            return [self._chunk("agent_thought_chunk", item.text, item.message_id)]
        if isinstance(item, AgentText) and item.reset is None:  # a replay shows no resets
            return [self._chunk("agent_message_chunk", item.text, item.message_id)]
        if isinstance(item, PromptShown) and all(plain_text(b) for b in item.blocks):
            mid = item.message_id
            return [self._chunk("user_message_chunk", str(b["text"]), mid) for b in item.blocks]
        return [
            encode({"jsonrpc": "2.0", "method": "session/update", "params": params})
            for params in replay_params(self._session_id, item, compaction=self._compaction)
        ]

    def _chunk(self, kind: str, text: str, message_id: str) -> bytes:
        line = (
            f'{self._head}{kind}","content":{{"type":"text","text":{encode_basestring(text)}}}'
            f',"messageId":{encode_basestring(message_id)}}}}}}}\n'
        )
        try:
            return line.encode()
        except UnicodeEncodeError:  # a lone surrogate: `encode`'s ASCII form, as live
            content: JsonObject = {"type": "text", "text": text}
            update: JsonObject = {"sessionUpdate": kind, "content": content}
            update["messageId"] = message_id
            params: JsonObject = {"sessionId": self._session_id, "update": update}
            return encode({"jsonrpc": "2.0", "method": "session/update", "params": params})


async def replay_session(
    peer: JsonRpcPeer, store: SessionStore, session_id: str, *, compaction: bool = False
) -> None:
    """Writes the replay of every stored turn of the session, page by page (each page's
    lines before the next page is read); `compaction`: the client advertised
    `session.compaction`."""
    lines = ReplayLines(session_id, compaction=compaction)
    for page in store.shown_pages(session_id):
        batch: list[bytes] = []
        size = 0
        for item in transcript(page):
            for line in lines.of(item):
                batch.append(line)
                size += len(line)
            if size >= WRITE_BYTES:
                await peer.notify_lines(batch)
                batch, size = [], 0
        if batch:
            await peer.notify_lines(batch)
