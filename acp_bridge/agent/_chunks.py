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
from acp_bridge.wire import encode, loads

__all__ = [
    "MAX_QUEUED_CHARS",
    "MAX_QUEUED_PIECES",
    "ChunkBuffer",
    "ChunkLines",
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


class ChunkLines:
    """The JSON-RPC lines of one session's chunks, each message's template built once."""

    __slots__ = ("_session_id", "_templates")

    def __init__(self, session_id: str) -> None:
        self._session_id = session_id
        self._templates: dict[tuple[type, str], tuple[str, str]] = {}

    def line(
        self, kind: type[AgentText | AgentThought], message_id: str, text: str
    ) -> bytes | None:
        """The line of a chunk (without a reset marker); None when the text holds a lone
        surrogate, which only the general encoder writes (escaped)."""
        key = (kind, message_id)
        template = self._templates.get(key)
        if template is None:
            template = self._templates[key] = chunk_template(self._session_id, kind("", message_id))
        try:
            return (template[0] + encode_basestring(text) + template[1]).encode("utf-8")
        except UnicodeEncodeError:
            return None

    @staticmethod
    def message(line: bytes) -> JsonObject:
        """The message a line encodes (for the tracer, off the hot path)."""
        message = loads(line.decode())
        assert isinstance(message, dict)
        return message


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

    def add(self, chunk: AgentText | AgentThought) -> bool:
        """Queues a chunk; returns `full` (then the caller waits for the writer)."""
        kind = type(chunk)
        items = self._items
        text = chunk.text
        size = self.size = self.size + len(text)
        pieces = self.pieces = self.pieces + 1
        # Compared field by field (no tuple slices): this runs once per queued chunk.
        if self._merge and items and items[-1][0] is kind and items[-1][1] == chunk.message_id:
            items[-1][2].append(text)
        else:
            items.append((kind, chunk.message_id, [text]))
        return size >= MAX_QUEUED_CHARS or pieces >= MAX_QUEUED_PIECES

    def take(self) -> list[AgentText | AgentThought]:
        return [kind(text=text, message_id=mid) for kind, mid, text in self.take_runs()]

    def take_runs(self) -> list[tuple[type[AgentText | AgentThought], str, str]]:
        """Empties the queue: its chunks as (kind, message id, text), merged as `take`'s,
        without building a chunk object per run (the writer's per-batch path)."""
        items, self._items = self._items, []
        self.size = self.pieces = 0
        return [
            (kind, mid, parts[0] if len(parts) == 1 else "".join(parts))
            for kind, mid, parts in items
        ]
