"""Text and thought chunks on their way to the editor: their JSON-RPC lines and the queue
behind a busy writer (sans-IO; `PeerTurnSink` in `_sink` does the I/O).

A chunk's `session/update` line is its message's template around one string escape
(`chunk_template`), equal to the general encoder's bytes. `ChunkBuffer` holds the chunks
queued while the writer is busy, consecutive chunks of one message merged, and says when
enough waits that the turn must wait for the editor (ROBUST-BP-001).
"""

from __future__ import annotations

from json.encoder import encode_basestring
from typing import TypeGuard

from acp_bridge._json import JsonObject
from acp_bridge.turn import AgentText, AgentThought, TurnUpdate
from acp_bridge.wire import encode

__all__ = [
    "MAX_QUEUED_CHARS",
    "MAX_QUEUED_PIECES",
    "ChunkBuffer",
    "chunk_params",
    "chunk_template",
    "queueable",
]

MAX_QUEUED_CHARS = 1024 * 1024
"""Most chunk text queued behind a busy writer before the turn waits for the editor."""
MAX_QUEUED_PIECES = 16 * 1024
"""Most chunks queued behind a busy writer (tiny deltas cost an object each)."""


def chunk_params(session_id: str, chunk: AgentText | AgentThought) -> JsonObject:
    """The `session/update` params of a chunk, built directly (the per-chunk hot path).

    Equal to the pydantic path's output (a test holds them equal, and every test validates
    the wire against the official schema).
    """
    kind = "agent_message_chunk" if isinstance(chunk, AgentText) else "agent_thought_chunk"
    update: JsonObject = {
        "sessionUpdate": kind,
        "content": {"type": "text", "text": chunk.text},
        "messageId": chunk.message_id,
    }
    if isinstance(chunk, AgentText) and chunk.reset is not None:
        update["_meta"] = chunk.reset.to_meta()
    return {"sessionId": session_id, "update": update}


def chunk_template(session_id: str, chunk: AgentText | AgentThought) -> tuple[str, str]:
    """The JSON-RPC line of a chunk of this message around its text, as (before, after):
    `before + encode_basestring(text) + after` is exactly `encode` of the notification with
    `chunk_params` (a test holds them equal), so a chunk costs one string escape."""
    marker = "\x00text\x00"
    params = chunk_params(session_id, type(chunk)(marker, chunk.message_id))
    line = encode({"jsonrpc": "2.0", "method": "session/update", "params": params}).decode()
    before, after = line.split(encode_basestring(marker), 1)
    return before, after


def queueable(update: TurnUpdate) -> TypeGuard[AgentText | AgentThought]:
    """Whether an update may wait in the queue (and merge): text and thought chunks, but
    not a reset chunk, which is written at once: the editor must drop partial output
    during back-off."""
    if isinstance(update, AgentText):
        return update.reset is None
    return isinstance(update, AgentThought)


class ChunkBuffer:
    """Queued chunks, consecutive ones of the same kind and message merged (sans-IO).

    `merge=False` keeps every chunk as it came. `full` turns True at `MAX_QUEUED_CHARS`
    characters or `MAX_QUEUED_PIECES` chunks, whichever comes first.
    """

    __slots__ = ("_items", "_merge", "pieces", "size")

    def __init__(self, *, merge: bool = True) -> None:
        # At most MAX_QUEUED_PIECES pieces in all: a plain list of them is bounded.
        self._items: list[tuple[type[AgentText | AgentThought], str, list[str]]] = []
        self._merge = merge
        self.size = 0
        """Characters queued."""
        self.pieces = 0
        """Chunks queued."""

    def __bool__(self) -> bool:
        return bool(self._items)

    @property
    def full(self) -> bool:
        return self.size >= MAX_QUEUED_CHARS or self.pieces >= MAX_QUEUED_PIECES

    def add(self, chunk: AgentText | AgentThought) -> None:
        kind = type(chunk)
        items = self._items
        self.size += len(chunk.text)
        self.pieces += 1
        # Compared field by field (no tuple slices): this runs once per queued chunk.
        if self._merge and items and items[-1][0] is kind and items[-1][1] == chunk.message_id:
            items[-1][2].append(chunk.text)
        else:
            items.append((kind, chunk.message_id, [chunk.text]))

    def take(self) -> list[AgentText | AgentThought]:
        items, self._items = self._items, []
        self.size = self.pieces = 0
        return [kind(text="".join(parts), message_id=mid) for kind, mid, parts in items]
